// SPDX-License-Identifier: Apache-2.0
// masks.js - COCO RLE (the strings the server sends: pycocotools' rleToString)
// to masks, and masks drawn over an image.
"use strict";
var samc = window.samc || {};
window.samc = samc;

// pycocotools' rleFrString: 6-bit characters from '0', 5 value bits each,
// bit 5 "more follows", the last character's bit 4 the sign; from the third
// count on, each is stored as the difference to the count two before.
samc.rleCounts = function (s) {
  const counts = [];
  let p = 0;
  while (p < s.length) {
    let x = 0, k = 0, more = true, c = 0;
    while (more) {
      c = s.charCodeAt(p++) - 48;
      x += (c & 0x1f) * Math.pow(2, 5 * k);
      more = (c & 0x20) !== 0;
      k++;
    }
    if (c & 0x10) x -= Math.pow(2, 5 * k);
    if (counts.length > 2) x += counts[counts.length - 2];
    counts.push(x);
  }
  return counts;
};

// A row-major Uint8Array (1: in the mask) of an RLE {size: [h, w], counts}.
samc.rleDecode = function (rle) {
  const h = rle.size[0], w = rle.size[1];
  const counts = typeof rle.counts === "string" ? samc.rleCounts(rle.counts) : rle.counts;
  const out = new Uint8Array(h * w);
  let i = 0, v = 0;
  for (const n of counts) { // runs go down the columns (Fortran order)
    if (v) for (let j = i; j < i + n; j++) out[(j % h) * w + Math.floor(j / h)] = 1;
    i += n;
    v ^= 1;
  }
  return out;
};

samc.palette = [[31, 111, 235], [230, 85, 13], [49, 163, 84], [214, 39, 40], [148, 103, 189],
                [140, 86, 75], [227, 119, 194], [23, 190, 207], [188, 189, 34], [127, 127, 127]];
samc.color = function (k) { return samc.palette[((k % 10) + 10) % 10]; };

// Masks (row-major 0/1 arrays of w x h) blended over what `ctx` holds.
samc.drawMasks = function (ctx, masks, w, h, alpha) {
  if (!masks.length) return;
  const img = ctx.getImageData(0, 0, w, h), d = img.data;
  masks.forEach(function (m, k) {
    const c = samc.color(m.color !== undefined ? m.color : k), a = alpha || 0.5;
    for (let i = 0; i < w * h; i++) {
      if (!m.data[i]) continue;
      d[4 * i] = d[4 * i] * (1 - a) + c[0] * a;
      d[4 * i + 1] = d[4 * i + 1] * (1 - a) + c[1] * a;
      d[4 * i + 2] = d[4 * i + 2] * (1 - a) + c[2] * a;
    }
  });
  ctx.putImageData(img, 0, 0);
};

// A black and white PNG of one mask, as a Blob (for the download).
samc.maskPng = function (data, w, h) {
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  const g = c.getContext("2d"), img = g.createImageData(w, h);
  for (let i = 0; i < w * h; i++) {
    const v = data[i] ? 255 : 0;
    img.data[4 * i] = img.data[4 * i + 1] = img.data[4 * i + 2] = v;
    img.data[4 * i + 3] = 255;
  }
  g.putImageData(img, 0, 0);
  return new Promise(function (resolve) { c.toBlob(resolve, "image/png"); });
};

samc.download = function (blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
};
