// SPDX-License-Identifier: Apache-2.0
// video.js - the video tab: open a video file (a session on the server), click
// on a frame for an object, propagate (the frames' masks stream in with the
// progress), scrub through the frames with their masks drawn.
"use strict";
var samc = window.samc || {};
window.samc = samc;

samc.initVideo = function () {
  const $ = function (id) { return document.getElementById(id); };
  const st = {id: null, frames: 0, w: 0, h: 0, t: 0, masks: {}, prompts: {}, pictures: {}, running: false};
  const stage = new samc.Stage($("video-canvas"), samc.guard(onPrompt));
  samc.videoState = st;

  function enable() {
    const on = st.id !== null && !st.running;
    $("new-object").disabled = $("propagate").disabled = $("video-reset").disabled = !on;
    $("scrubber").disabled = st.id === null;
  }

  async function picture(t) {
    if (!st.pictures[t]) {
      const r = await fetch("/v1/videos/" + st.id + "/frames/" + t);
      if (!r.ok) throw new Error("frame " + t + ": HTTP " + r.status);
      st.pictures[t] = await createImageBitmap(await r.blob());
    }
    return st.pictures[t];
  }

  // Frame t with its masks (kept from prompts and propagation) and the
  // current object's points on it.
  async function showFrame(t) {
    st.t = t;
    $("scrubber").value = t;
    $("frame-label").textContent = "frame " + t + " / " + (st.frames - 1);
    const pic = await picture(t);
    if (st.t !== t) return; // scrubbed on meanwhile
    stage.picture = pic;
    stage.masks = (st.masks[t] || []).filter(function (o) { return o.present; })
      .map(function (o) { return {data: o.data, color: o.obj_id}; });
    const key = t + ":" + $("obj-id").value, p = st.prompts[key] || {points: [], box: null};
    stage.points = p.points;
    stage.box = p.box;
    stage.redraw();
  }

  function keep(t, objects) {
    st.masks[t] = objects.map(function (o) {
      return {obj_id: o.obj_id, present: o.area > 0, data: samc.rleDecode(o.rle)};
    });
  }

  async function onPrompt(p) {
    if (!st.id || st.running) return;
    const obj = +$("obj-id").value, key = st.t + ":" + obj;
    const pr = st.prompts[key] || (st.prompts[key] = {points: [], box: null});
    if (p.box) pr.box = p.box.map(Math.round);
    else pr.points.push(p.point);
    const body = {frame: st.t, obj_id: obj, clear: true};
    if (pr.points.length) body.points = pr.points;
    if (pr.box) body.box = pr.box;
    samc.setStatus("segmenting frame " + st.t + "...");
    const r = await samc.call("POST", "/v1/videos/" + st.id + "/prompts", body);
    keep(r.frame, r.objects);
    samc.setStatus("object " + obj + " on frame " + st.t + " in " + r.timing_ms.total.toFixed(0) + " ms");
    await showFrame(st.t);
  }

  async function open(file) {
    samc.setStatus("uploading the video...");
    const r = await samc.call("POST", "/v1/videos", file, file.type || "application/octet-stream");
    Object.assign(st, {id: r.id, frames: r.frames, w: r.width, h: r.height, masks: {}, prompts: {}, pictures: {}});
    stage.setPicture(await picture(0), r.width, r.height);
    $("scrubber").max = r.frames - 1;
    enable();
    await showFrame(0);
    samc.setStatus(r.frames + " frames " + r.width + "x" + r.height + " (" + r.codec + ")" +
                   (r.damage ? ": damaged: " + r.damage : ""));
  }

  async function propagate() {
    st.running = true;
    enable();
    $("progress").value = 0;
    const t0 = performance.now();
    try {
      await samc.stream("/v1/videos/" + st.id + "/propagate", {}, function (name, d) {
        if (name === "frame") {
          keep(d.frame, d.objects);
          $("progress").max = d.total || st.frames;
          $("progress").value = d.done;
          samc.setStatus("propagating: " + d.done + " / " + d.total);
          showFrame(d.frame).catch(function (e) { samc.showError(e.message); });
        } else if (name === "error") {
          throw new Error("propagation stopped: " + d.error);
        } else if (name === "done") {
          samc.setStatus(d.frames + " frames in " + ((performance.now() - t0) / 1000).toFixed(1) + " s" +
                         (d.damage ? " (the file is damaged: " + d.damage + ")" : ""));
        }
      });
    } finally {
      st.running = false;
      enable();
    }
  }

  async function reset() {
    await samc.call("POST", "/v1/videos/" + st.id + "/reset");
    st.masks = {}; st.prompts = {};
    await showFrame(st.t);
  }

  $("video-file").addEventListener("change", samc.guard(async function (e) {
    if (e.target.files.length) await open(e.target.files[0]);
    e.target.value = "";
  }));
  $("scrubber").addEventListener("input", samc.guard(async function () { await showFrame(+$("scrubber").value); }));
  $("obj-id").addEventListener("change", samc.guard(async function () { if (st.id) await showFrame(st.t); }));
  $("new-object").addEventListener("click", samc.guard(async function () {
    let max = 0;
    for (const k in st.prompts) max = Math.max(max, +k.split(":")[1]);
    $("obj-id").value = max + 1;
    await showFrame(st.t);
  }));
  $("propagate").addEventListener("click", samc.guard(propagate));
  $("video-reset").addEventListener("click", samc.guard(reset));
  enable();
};
