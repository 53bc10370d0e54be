// SPDX-License-Identifier: Apache-2.0
// browser_test.mjs - samc serve's page in a real browser: headless Chromium
// (Debian's) driven by playwright-core clicks, drags and types on the page
// against a `samc serve` running the bundled tiny models, and checks the DOM
// and the canvas pixels against what the JSON API answers for the same
// prompts: the mask is drawn where the server says it is, the candidates
// and SAM 3 instances are listed, "everything" and the downloads work, a
// server error shows in the page, a video is opened, prompted, propagated
// and scrubbed with its masks drawn. Screenshots go to OUT_DIR (CI artefacts).
//
//   node browser_test.mjs SAMC_BINARY SOURCE_DIR OUT_DIR [CHROMIUM]
// Exit 0: passed; 1: failed; 77: skipped (no Chromium / playwright-core),
// unless SAMC_REQUIRE_BROWSER_TEST=1 makes a missing one a failure.
import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const [samc, src, out, chromiumArg] = process.argv.slice(2);
const SKIP = process.env.SAMC_REQUIRE_BROWSER_TEST === "1" ? 1 : 77;
const chromium = chromiumArg || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
let pw;
try {
  pw = await import("playwright-core");
} catch (e) {
  console.log("SKIP: playwright-core is not installed (scripts/install_deps.sh --web)");
  process.exit(SKIP);
}
if (!chromium || !fs.existsSync(chromium)) {
  console.log("SKIP: no Chromium (scripts/install_deps.sh --web installs Debian's)");
  process.exit(SKIP);
}
fs.mkdirSync(out, {recursive: true});
const fixture = (p) => path.join(src, p);
let server, browser, failures = 0;
const t0 = Date.now();

function check(cond, what) {
  console.log((cond ? "ok   " : "FAIL ") + what);
  if (!cond) failures++;
}

async function startServer() {
  const portFile = path.join(out, "port");
  fs.rmSync(portFile, {force: true});
  server = spawn(samc, ["serve", "--port", "0", "--port-file", portFile, "--workers", "2", "--threads", "1",
                        "--model", fixture("fixtures/video/tiny_v1_sam21_s128.h5"),
                        "--model", fixture("fixtures/sam3/tiny_s2_sam3.pt"),
                        "--config", fixture("fixtures/sam3/tiny_s2_sam3.config.json"),
                        "--vocab", fixture("tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz")],
                 {stdio: ["ignore", "inherit", "inherit"]});
  for (let i = 0; i < 600 && !fs.existsSync(portFile); i++) await new Promise((r) => setTimeout(r, 100));
  if (!fs.existsSync(portFile)) throw new Error("samc serve did not start");
  return "http://127.0.0.1:" + fs.readFileSync(portFile, "utf8").trim();
}

async function api(base, method, p, body) {
  const r = await fetch(base + p, {method, headers: {"Content-Type": "application/json"},
                                   body: body === undefined ? undefined : JSON.stringify(body)});
  return r.json();
}

// Where a mask is and is not, away from the prompt markers: sampled pixels
// of the canvas must be the picture blended with the mask colour (inside)
// or the picture itself (outside).
async function checkOverlay(page, canvasSel, rle, colorIndex, avoid, what) {
  const res = await page.evaluate(([sel, rle, ci, avoid]) => {
    const c = document.querySelector(sel), g = c.getContext("2d");
    const shown = g.getImageData(0, 0, c.width, c.height).data;
    const o = document.createElement("canvas");
    o.width = c.width; o.height = c.height;
    const og = o.getContext("2d");
    og.drawImage(window.__picture(sel), 0, 0, c.width, c.height);
    const orig = og.getImageData(0, 0, c.width, c.height).data;
    const m = window.samc.rleDecode(rle), col = window.samc.color(ci);
    let inside = 0, outside = 0, bad = 0;
    for (let i = 0; i < c.width * c.height; i += 7) {
      const x = i % c.width, y = Math.floor(i / c.width);
      if (avoid.some((p) => Math.abs(p[0] - x) < 12 && Math.abs(p[1] - y) < 12)) continue;
      for (let k = 0; k < 3; k++) {
        const want = m[i] ? orig[4 * i + k] * 0.5 + col[k] * 0.5 : orig[4 * i + k];
        if (Math.abs(shown[4 * i + k] - want) > 1.5) { bad++; break; }
      }
      if (m[i]) inside++; else outside++;
    }
    return {inside, outside, bad};
  }, [canvasSel, rle, colorIndex, avoid]);
  check(res.bad === 0 && res.inside > 0, `${what}: the mask is drawn where the server puts it ` +
        `(${res.inside} pixels inside, ${res.outside} outside sampled, ${res.bad} wrong)`);
}

async function clickAt(page, sel, x, y, button) {
  const box = await page.locator(sel).boundingBox();
  const size = await page.evaluate((s) => [document.querySelector(s).width, document.querySelector(s).height], sel);
  await page.mouse.click(box.x + (x + 0.5) * box.width / size[0], box.y + (y + 0.5) * box.height / size[1],
                         {button: button || "left"});
}

async function imageTab(page, base) {
  let lastPredict = null;
  page.on("request", (r) => { if (r.url().endsWith("/predict")) lastPredict = r.postDataJSON(); });
  await page.setInputFiles("#image-file", fixture("fixtures/demo/demo.png"));
  await page.waitForFunction(() => /encoded in/.test(document.getElementById("status").textContent));
  const id = await page.evaluate(() => window.__imageId());
  check(/^[0-9a-f]{32}$/.test(id), "image uploaded: id " + id);

  await clickAt(page, "#image-canvas", 100, 90);
  await page.waitForFunction(() => document.querySelectorAll("#results li").length === 3);
  check(true, "one click: three candidates listed");
  const scores = await page.locator("#results li .score").allTextContents();
  const ref = await api(base, "POST", `/v1/images/${id}/predict`, lastPredict);
  check(scores.every((s, k) => s.startsWith("score " + ref.masks[k].score.toFixed(3))),
        "the candidates' scores are the server's: " + scores.join(" | "));
  check(await page.locator("#results li.selected").getAttribute("data-index") === String(ref.best),
        "the best candidate is selected");
  await checkOverlay(page, "#image-canvas", ref.masks[ref.best].rle, 0, lastPredict.points, "click");
  await page.screenshot({path: path.join(out, "image_click.png")});

  const other = (ref.best + 1) % 3;
  await page.locator(`#results li[data-index="${other}"]`).click();
  await checkOverlay(page, "#image-canvas", ref.masks[other].rle, 0, lastPredict.points, "another candidate");

  await clickAt(page, "#image-canvas", 250, 60, "right");
  await page.waitForFunction(() => document.querySelectorAll("#results li").length === 1);
  check(lastPredict.points.length === 2 && lastPredict.points[1][2] === 0 && lastPredict.mask_input,
        "right click: a negative point, the previous mask as mask_input, one mask");

  const b = await page.locator("#image-canvas").boundingBox();
  await page.mouse.move(b.x + b.width * 0.2, b.y + b.height * 0.2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width * 0.5, b.y + b.height * 0.5, {steps: 5});
  await page.mouse.move(b.x + b.width * 0.7, b.y + b.height * 0.8, {steps: 5});
  await page.mouse.up();
  await page.waitForFunction(() => /masks in/.test(document.getElementById("status").textContent));
  check(lastPredict.box && lastPredict.box[2] > lastPredict.box[0] + 50, "drag: a box " + JSON.stringify(lastPredict.box));
  await page.screenshot({path: path.join(out, "image_box.png")});

  const [png] = await Promise.all([page.waitForEvent("download"), page.click("#download-png")]);
  const pngBytes = fs.readFileSync(await png.path());
  check(pngBytes.subarray(1, 4).toString() === "PNG" && pngBytes.readUInt32BE(16) === 320 &&
        pngBytes.readUInt32BE(20) === 240, "mask PNG downloaded (320x240)");
  const [js] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
  const coco = JSON.parse(fs.readFileSync(await js.path(), "utf8"));
  check(coco.annotations.length === 1 && coco.annotations[0].segmentation.size.join() === "240,320",
        "COCO JSON downloaded");

  await page.fill("#concept-thr", "0"); // random weights: every query kept
  await page.fill("#concept", "a dog");
  await page.click("#find");
  await page.waitForFunction(() => document.getElementById("results-title").textContent.startsWith("Instances"));
  const n3 = await page.locator("#results li").count();
  const ref3 = await api(base, "POST", `/v1/images/${id}/concepts`, {text: "a dog", threshold: 0});
  check(n3 === ref3.instances.length && n3 > 0, `SAM 3: ${n3} instances listed, as the server finds`);
  await page.screenshot({path: path.join(out, "image_sam3.png")});

  await page.fill("#amg-pps", "4");
  await page.fill("#amg-iou", "0");
  await page.fill("#amg-stab", "0");
  await page.click("#everything");
  await page.waitForFunction(() => document.getElementById("results-title").textContent.startsWith("Everything"));
  const refAmg = await api(base, "POST", `/v1/images/${id}/everything`,
                           {points_per_side: 4, pred_iou_thresh: 0, stability_score_thresh: 0});
  check(await page.locator("#results li").count() === refAmg.count && refAmg.count > 0,
        `everything: ${refAmg.count} masks listed`);
  await page.screenshot({path: path.join(out, "image_everything.png")});

  await page.setInputFiles("#image-file", {name: "bad.png", mimeType: "image/png", buffer: Buffer.from("not an image")});
  await page.waitForFunction(() => !document.getElementById("error").hidden);
  const err = await page.textContent("#error");
  check(/not a readable image/.test(err), "a server error shows in the page: " + err);
}

async function videoTab(page, base) {
  await page.click("#tab-video");
  await page.setInputFiles("#video-file", fixture("fixtures/video/clip_v1.mp4"));
  await page.waitForFunction(() => /5 frames/.test(document.getElementById("status").textContent));
  check(true, "video opened: 5 frames");
  const vid = await page.evaluate(() => window.__videoId());
  await clickAt(page, "#video-canvas", 72, 48);
  await page.waitForFunction(() => /object 1 on frame 0/.test(document.getElementById("status").textContent));
  await page.click("#propagate");
  await page.waitForFunction(() => /frames in/.test(document.getElementById("status").textContent));
  check(await page.evaluate(() => document.getElementById("progress").value) === 5, "propagated: 5 of 5 frames");
  await page.$eval("#scrubber", (s) => { s.value = 3; s.dispatchEvent(new Event("input")); });
  await page.waitForFunction(() => document.getElementById("frame-label").textContent === "frame 3 / 4");
  await page.waitForTimeout(200);
  const masks = await api(base, "GET", `/v1/videos/${vid}/masks/3`);
  check(masks.objects.length === 1 && masks.objects[0].area > 0, "frame 3 has object 1's mask on the server");
  await checkOverlay(page, "#video-canvas", masks.objects[0].rle, masks.objects[0].obj_id, [], "scrubbed to frame 3");
  await page.screenshot({path: path.join(out, "video_frame3.png")});
}

try {
  const base = await startServer();
  browser = await pw.chromium.launch({executablePath: chromium, headless: true,
                                      args: ["--no-sandbox", "--disable-gpu"]});
  const page = await browser.newPage({viewport: {width: 1366, height: 768}, acceptDownloads: true});
  page.on("pageerror", (e) => check(false, "no script error in the page: " + e.message));
  // Test hooks: the page's state read back (nothing the page needs).
  await page.addInitScript(() => {
    const pics = {};
    window.__picture = (sel) => pics[sel]();
    window.addEventListener("DOMContentLoaded", () => {
      for (const sel of ["#image-canvas", "#video-canvas"]) pics[sel] = () => window.samc.stages[sel].picture;
    });
    window.__imageId = () => window.samc.imageState.id;
    window.__videoId = () => window.samc.videoState.id;
  });
  await page.goto(base + "/");
  await page.waitForFunction(() => /SAM 2/.test(document.getElementById("models").textContent) &&
                                   /SAM 3/.test(document.getElementById("models").textContent));
  check(true, "page loaded; models: " + await page.textContent("#models"));
  await imageTab(page, base);
  await videoTab(page, base);
} catch (e) {
  check(false, "the test ran to its end: " + (e.stack || e));
} finally {
  if (browser) await browser.close();
  if (server) server.kill("SIGTERM");
}
console.log(`${failures ? "FAILED" : "passed"} in ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshots in ${out}`);
process.exit(failures ? 1 : 0);
