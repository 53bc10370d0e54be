// SPDX-License-Identifier: Apache-2.0
// api.js - the server's JSON API (docs/serve.md) from the page: requests,
// errors shown in the page, and a propagation's event stream.
"use strict";
var samc = window.samc || {};
window.samc = samc;

samc.showError = function (msg) {
  const e = document.getElementById("error");
  e.textContent = msg;
  e.hidden = !msg;
};

samc.setStatus = function (msg) { document.getElementById("status").textContent = msg || ""; };

// fetch, then the JSON reply; a reply with an error status throws the
// server's message (shown in the page by the caller's catch).
samc.call = async function (method, path, body, type) {
  const opt = {method: method, headers: {}};
  if (body !== undefined) {
    opt.body = type ? body : JSON.stringify(body);
    opt.headers["Content-Type"] = type || "application/json";
  }
  let r;
  try {
    r = await fetch(path, opt);
  } catch (e) {
    throw new Error("the server cannot be reached (" + e.message + ")");
  }
  const text = await r.text();
  let json = null;
  try { json = text ? JSON.parse(text) : {}; } catch (e) { json = null; }
  if (!r.ok) throw new Error((json && json.error) || ("HTTP " + r.status));
  if (json === null) throw new Error("the server's reply is not JSON");
  return json;
};

// POST, then read the text/event-stream reply: onEvent(name, data) per event.
samc.stream = async function (path, body, onEvent) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  if (!r.ok) {
    let msg = "HTTP " + r.status;
    try { msg = (await r.json()).error || msg; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  const reader = r.body.getReader(), dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buf += dec.decode(chunk.value, {stream: true});
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
};

// Run an async action with the error banner cleared first and filled on failure.
samc.guard = function (fn) {
  return async function () {
    samc.showError("");
    try {
      await fn.apply(this, arguments);
    } catch (e) {
      samc.showError(e.message);
      samc.setStatus("");
    }
  };
};
