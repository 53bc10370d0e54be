// SPDX-License-Identifier: Apache-2.0
// image.js - the image tab: open an image (uploaded: the server computes its
// embedding once), prompts -> masks after each click, the candidates of an
// ambiguous click with their scores, SAM 3 concepts, "everything", downloads.
"use strict";
var samc = window.samc || {};
window.samc = samc;

samc.initImage = function () {
  const $ = function (id) { return document.getElementById(id); };
  const st = {id: null, w: 0, h: 0, points: [], box: null, pred: null, results: [], selected: 0, kind: "masks"};
  const stage = new samc.Stage($("image-canvas"), samc.guard(onPrompt));
  samc.imageState = st;

  function enable(on) {
    for (const id of ["clear", "everything", "download-png", "download-json"]) $(id).disabled = !on;
    const sam3 = samc.hasSam3 && on;
    $("concept").disabled = $("find").disabled = !sam3;
    $("everything").disabled = !(on && samc.hasSam2);
  }

  // The results list (candidates, instances or everything) and the overlay.
  function show() {
    const list = $("results");
    list.textContent = "";
    $("results-title").textContent = st.kind === "instances" ? "Instances (SAM 3)" :
      st.kind === "everything" ? "Everything (" + st.results.length + ")" : "Masks";
    st.results.forEach(function (r, k) {
      const li = document.createElement("li");
      li.dataset.index = k;
      if (k === st.selected && st.kind === "masks") li.classList.add("selected");
      const sw = document.createElement("span");
      sw.className = "swatch";
      const c = samc.color(st.kind === "masks" ? 0 : k);
      sw.style.background = "rgb(" + c.join(",") + ")";
      li.appendChild(sw);
      const t = document.createElement("span");
      t.className = "score";
      t.textContent = (st.kind === "everything" ? "IoU " : "score ") + r.score.toFixed(3) + "  (" + r.area + " px)";
      li.appendChild(t);
      li.addEventListener("click", function () { st.selected = k; show(); });
      list.appendChild(li);
    });
    if (st.kind === "masks")
      stage.masks = st.results.length ? [{data: st.results[st.selected].data, color: 0}] : [];
    else
      stage.masks = st.results.map(function (r, k) { return {data: r.data, color: k}; });
    stage.points = st.points;
    stage.box = st.box;
    stage.redraw();
  }

  function decode(list, score) {
    return list.map(function (m) {
      return {score: m[score], area: m.area, bbox: m.bbox, rle: m.rle, data: samc.rleDecode(m.rle)};
    });
  }

  async function predict() {
    const body = {points: st.points};
    if (st.box) body.box = st.box;
    if (!st.points.length) delete body.points;
    if (st.points.length > 1 && st.pred !== null && st.kind === "masks") // refine the chosen mask (the official demo)
      body.mask_input = {prediction: st.pred, index: st.selected};
    samc.setStatus("segmenting...");
    const r = await samc.call("POST", "/v1/images/" + st.id + "/predict", body);
    st.pred = r.prediction;
    st.kind = "masks";
    st.results = decode(r.masks, "score");
    st.selected = r.best;
    samc.setStatus("masks in " + r.timing_ms.total.toFixed(1) + " ms (" + r.cache + ")");
    show();
  }

  async function onPrompt(p) {
    if (!st.id) return;
    if (p.box) st.box = p.box.map(Math.round);
    else st.points.push(p.point);
    await predict();
  }

  async function open(file) {
    samc.setStatus("uploading and encoding...");
    const r = await samc.call("POST", "/v1/images", file, file.type || "application/octet-stream");
    const bitmap = await createImageBitmap(file);
    Object.assign(st, {id: r.id, w: r.width, h: r.height, points: [], box: null, pred: null, results: []});
    stage.setPicture(bitmap, r.width, r.height);
    enable(true);
    show();
    samc.setStatus("image " + r.width + "x" + r.height + " encoded in " + r.timing_ms.encode.toFixed(0) + " ms");
  }

  async function concepts(e) {
    e.preventDefault();
    const text = $("concept").value.trim();
    if (!text && !st.box) throw new Error("type a concept (or draw a box first)");
    const body = {threshold: +$("concept-thr").value};
    if (text) body.text = text;
    if (st.box) body.boxes = [st.box];
    samc.setStatus("finding " + (text || "the box's concept") + "...");
    const r = await samc.call("POST", "/v1/images/" + st.id + "/concepts", body);
    st.kind = "instances";
    st.results = decode(r.instances, "score");
    st.points = [];
    samc.setStatus(r.instances.length + " instance(s) in " + r.timing_ms.total.toFixed(0) + " ms");
    show();
  }

  async function everything() {
    samc.setStatus("segmenting everything...");
    const r = await samc.call("POST", "/v1/images/" + st.id + "/everything", {
      points_per_side: +$("amg-pps").value, pred_iou_thresh: +$("amg-iou").value,
      stability_score_thresh: +$("amg-stab").value});
    st.kind = "everything";
    st.results = r.masks.map(function (m) {
      return {score: m.predicted_iou, area: m.area, bbox: m.bbox, rle: m.segmentation,
              data: samc.rleDecode(m.segmentation)};
    });
    st.points = []; st.box = null;
    samc.setStatus(r.count + " masks in " + r.timing_ms.total.toFixed(0) + " ms");
    show();
  }

  // What the overlay shows: the chosen mask, or every instance / mask.
  function shown() { return st.kind === "masks" ? st.results.slice(st.selected, st.selected + 1) : st.results; }

  async function downloadPng() {
    const s = shown();
    if (!s.length) throw new Error("no mask to download yet");
    const all = new Uint8Array(st.w * st.h);
    for (const r of s) for (let i = 0; i < all.length; i++) all[i] |= r.data[i];
    samc.download(await samc.maskPng(all, st.w, st.h), "mask.png");
  }

  function downloadJson() {
    const s = shown();
    if (!s.length) throw new Error("no mask to download yet");
    const coco = {images: [{id: 1, width: st.w, height: st.h}],
                  annotations: s.map(function (r, k) {
                    return {id: k + 1, image_id: 1, category_id: 1, segmentation: r.rle, area: r.area, bbox: r.bbox,
                            score: r.score, iscrowd: 0};
                  }),
                  categories: [{id: 1, name: "object"}]};
    samc.download(new Blob([JSON.stringify(coco)], {type: "application/json"}), "masks.coco.json");
  }

  $("image-file").addEventListener("change", samc.guard(async function (e) {
    if (e.target.files.length) await open(e.target.files[0]);
    e.target.value = "";
  }));
  $("clear").addEventListener("click", function () {
    Object.assign(st, {points: [], box: null, pred: null, results: [], kind: "masks"});
    show();
  });
  $("everything").addEventListener("click", samc.guard(everything));
  $("concept-form").addEventListener("submit", samc.guard(concepts));
  $("download-png").addEventListener("click", samc.guard(downloadPng));
  $("download-json").addEventListener("click", samc.guard(downloadJson));
  enable(false);
  samc.imageEnable = function () { enable(st.id !== null); };
};
