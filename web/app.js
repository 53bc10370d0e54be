// SPDX-License-Identifier: Apache-2.0
// app.js - the page: the models the server has, the two tabs.
"use strict";
var samc = window.samc || {};
window.samc = samc;

(async function () {
  const $ = function (id) { return document.getElementById(id); };
  function tab(name) {
    for (const t of ["image", "video"]) {
      $(t + "-view").hidden = t !== name;
      $("tab-" + t).setAttribute("aria-selected", String(t === name));
    }
  }
  $("tab-image").addEventListener("click", function () { tab("image"); });
  $("tab-video").addEventListener("click", function () { tab("video"); });
  samc.initImage();
  samc.initVideo();
  try {
    const r = await samc.call("GET", "/v1/models");
    samc.hasSam2 = r.models.some(function (m) { return m.family === "SAM 2"; });
    samc.hasSam3 = r.models.some(function (m) { return m.family === "SAM 3"; });
    $("models").textContent = r.models.map(function (m) { return m.family + ": " + m.file; }).join(" | ");
    $("tab-video").disabled = !samc.hasSam2;
    samc.imageEnable();
  } catch (e) {
    samc.showError(e.message);
  }
})();
