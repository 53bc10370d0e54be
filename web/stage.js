// SPDX-License-Identifier: Apache-2.0
// stage.js - a canvas showing a picture at its own size (scaled by CSS),
// with clicks and drags turned into prompts in picture pixels: left click a
// positive point, right click a negative one, a drag a box.
"use strict";
var samc = window.samc || {};
window.samc = samc;

samc.stages = {};                  // by "#canvas-id" (tests read the pictures shown)

samc.Stage = function (canvas, onPrompt) {
  samc.stages["#" + canvas.id] = this;
  window.addEventListener("resize", () => { if (this.picture) this.fit(); });
  this.canvas = canvas;
  this.ctx = canvas.getContext("2d", {willReadFrequently: true});
  this.picture = null;             // an ImageBitmap or <img>
  this.w = canvas.width; this.h = canvas.height;
  const self = this;
  let down = null, drag = null;
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });
  canvas.addEventListener("mousedown", function (e) {
    if (!self.picture) return;
    down = {p: self.toPicture(e), button: e.button};
    drag = null;
  });
  canvas.addEventListener("mousemove", function (e) {
    if (!down) return;
    const p = self.toPicture(e);
    if (Math.abs(p[0] - down.p[0]) + Math.abs(p[1] - down.p[1]) > 6 * self.scale()) {
      drag = [Math.min(down.p[0], p[0]), Math.min(down.p[1], p[1]), Math.max(down.p[0], p[0]), Math.max(down.p[1], p[1])];
      self.redraw(drag);
    }
  });
  window.addEventListener("mouseup", function (e) {
    if (!down) return;
    const d = down, box = drag;
    down = drag = null;
    if (box) onPrompt({box: box});
    else if (e.target === canvas) onPrompt({point: [d.p[0], d.p[1], d.button === 2 ? 0 : 1]});
  });
};

// Picture pixels per CSS pixel.
samc.Stage.prototype.scale = function () {
  const r = this.canvas.getBoundingClientRect();
  return r.width ? this.w / r.width : 1;
};

samc.Stage.prototype.toPicture = function (e) {
  const r = this.canvas.getBoundingClientRect(), s = this.w / r.width;
  const x = Math.min(this.w - 1, Math.max(0, (e.clientX - r.left) * s));
  const y = Math.min(this.h - 1, Math.max(0, (e.clientY - r.top) * (this.h / r.height)));
  return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
};

samc.Stage.prototype.setPicture = function (picture, w, h) {
  this.picture = picture;
  this.w = this.canvas.width = w;
  this.h = this.canvas.height = h;
  this.masks = []; this.points = []; this.box = null;
  this.fit();
  this.redraw();
};

// Shown as large as the page allows (small pictures scaled up), aspect kept.
samc.Stage.prototype.fit = function () {
  const area = this.canvas.parentElement.getBoundingClientRect();
  const room = window.innerHeight - area.top - 48;
  const s = Math.min(area.width / this.w, Math.max(120, room) / this.h);
  this.canvas.style.width = Math.floor(this.w * s) + "px";
  this.canvas.style.height = Math.floor(this.h * s) + "px";
};

// The picture, the masks, the prompt markers, and a box being dragged.
samc.Stage.prototype.redraw = function (dragBox) {
  const g = this.ctx;
  g.clearRect(0, 0, this.w, this.h);
  if (!this.picture) return;
  g.drawImage(this.picture, 0, 0, this.w, this.h);
  samc.drawMasks(g, this.masks || [], this.w, this.h, 0.5);
  const r = Math.max(3, 5 * this.scale());
  for (const p of this.points || []) {
    g.beginPath();
    g.arc(p[0], p[1], r, 0, 2 * Math.PI);
    g.fillStyle = p[2] ? "#2da44e" : "#cf222e";
    g.fill();
    g.lineWidth = Math.max(1, this.scale());
    g.strokeStyle = "#fff";
    g.stroke();
  }
  for (const b of [this.box, dragBox]) {
    if (!b) continue;
    g.lineWidth = Math.max(1.5, 2 * this.scale());
    g.strokeStyle = "#1f6feb";
    g.strokeRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
  }
};
