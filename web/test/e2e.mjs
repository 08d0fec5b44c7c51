// The web console's browser test: headless Debian Chromium driven by playwright-core against a
// running `vireoctl ui` (test/e2e/webui_test.go starts the cluster side and reads the results).
// Configuration: the JSON file named by VIREO_UI_TEST (see Config). Each step polls with a
// deadline; the first failure ends the run with exit code 1 and says what the page showed.
// Writes to config.outDir: result.json (timings) and vnc-{a,b}-{1,2,3}.png: each display page's
// canvas at first, after the guest wrote to its screen, and after the reboot Ctrl-Alt-Del caused.
//
// Config: {
//   editorURL, viewerURL: the URLs vireoctl ui printed for a user with edit in ns, and with view;
//   ns, otherNs: the user's namespace and one holding otherVM, which they may not see;
//   vm: a stopped VM in ns, whose tiny test guest (test/images) the test starts;
//   outDir, chromium: the browser's path (default /usr/bin/chromium)
// }
import { chromium } from "playwright-core";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const config = JSON.parse(await readFile(process.env.VIREO_UI_TEST, "utf8"));
const result = { steps: {} };
const started = Date.now();

function log(...args) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...args);
}

/** step runs fn, recording its duration; a failure names the step. */
async function step(name, fn) {
  const t0 = Date.now();
  log("step:", name);
  try {
    await fn();
  } catch (err) {
    err.message = `${name}: ${err.message}`;
    throw err;
  }
  result.steps[name] = Date.now() - t0;
}

const browser = await chromium.launch({
  executablePath: config.chromium || "/usr/bin/chromium",
  headless: true,
  // Playwright gives each launch a fresh temporary profile (it owns --user-data-dir).
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

const pageErrors = [];

/** openPage opens url in a context of its own (its own window, never a hidden tab). */
async function openPage(url, name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(url).origin });
  const page = await context.newPage();
  page.on("pageerror", (err) => pageErrors.push(`${name}: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/Content Security Policy/.test(msg.text())) log(`${name} console error:`, msg.text());
  });
  await page.goto(url);
  return page;
}

/** until polls fn (in Node) until it returns a truthy value, or fails with what() after ms. */
async function until(ms, what, fn) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`not within ${ms / 1000} s: ${await what()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const text = (page, sel) => page.locator(sel).first().textContent({ timeout: 1000 }).catch(() => "(absent)");

async function run() {
  const { ns, otherNs, vm } = config;
  const editor = await openPage(config.editorURL, "editor");

  await step("the page loads in under 1 s", async () => {
    const nav = await editor.evaluate(() => JSON.parse(JSON.stringify(performance.getEntriesByType("navigation")[0])));
    result.loadMs = Math.round(nav.loadEventEnd - nav.startTime);
    result.domContentLoadedMs = Math.round(nav.domContentLoadedEventEnd - nav.startTime);
    if (new URL(editor.url()).searchParams.has("token")) throw new Error(`the token stayed in the address: ${editor.url()}`);
    if (!(result.loadMs > 0 && result.loadMs < 1000)) throw new Error(`load took ${result.loadMs} ms`);
    await editor.locator("h1", { hasText: "Namespaces" }).waitFor({ timeout: 5000 });
  });

  await step("a user who may not list namespaces names one", async () => {
    await until(10000, () => text(editor, "main [role=status]"), async () =>
      /cannot be listed \(Refused \(403/.test(await text(editor, "main [role=status]")));
    await editor.fill("#ns-input", ns);
    await editor.keyboard.press("Enter");
    await editor.locator(`#vms tbody tr[data-name="${vm}"]`).waitFor({ timeout: 15000 });
  });

  await step("the namespace's VMs are listed and another namespace's are not", async () => {
    const names = await editor.locator("#vms tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.name));
    result.listed = names;
    if (names.includes(config.otherVM)) throw new Error(`${config.otherVM} of ${otherNs} is listed in ${ns}: ${names}`);
    await editor.goto(new URL(`#/ns/${otherNs}`, editor.url()).href);
    await until(10000, () => text(editor, "#vms-h + [role=status]"), async () =>
      /Refused \(403/.test(await text(editor, "#vms-h + [role=status]")));
    if (await editor.locator("#vms tbody tr").count() !== 0) throw new Error(`rows listed in ${otherNs}`);
    await editor.goto(new URL(`#/ns/${ns}`, editor.url()).href);
    await editor.locator(`#vms tbody tr[data-name="${vm}"]`).waitFor({ timeout: 15000 });
  });

  await step("Start turns the VM Running (through the watch)", async () => {
    // Keyboard: the button is reached and pressed like a user without a mouse would.
    await editor.getByRole("button", { name: `Start VM ${vm}`, exact: true }).focus();
    await editor.keyboard.press("Enter");
    await until(10000, () => text(editor, ".action-status"), async () =>
      /accepted/.test(await text(editor, ".action-status")));
    const status = `#vms tbody tr[data-name="${vm}"] [data-col=status]`;
    await until(180000, () => text(editor, status), async () => (await text(editor, status)) === "Running");
    const phase = `#vmis tbody tr[data-name="${vm}"] [data-col=phase]`;
    await until(30000, () => text(editor, phase), async () => (await text(editor, phase)) === "Running");
    result.node = await text(editor, `#vmis tbody tr[data-name="${vm}"] [data-col=node]`);
  });

  await step("a refused action shows the server's message", async () => {
    await editor.getByRole("button", { name: `Start VM ${vm}`, exact: true }).click();
    await until(10000, () => text(editor, ".action-status"), async () =>
      /Start VM .*: Refused \(\d+/.test(await text(editor, ".action-status")));
    result.refusedStart = await text(editor, ".action-status");
  });

  await step("Pause and Unpause act on the VMI, and its row follows", async () => {
    const phase = `#vmis tbody tr[data-name="${vm}"] [data-col=phase]`;
    await editor.getByRole("button", { name: `Pause VMI ${vm}`, exact: true }).click();
    await until(60000, () => text(editor, phase), async () => (await text(editor, phase)) === "Running (paused)");
    await editor.getByRole("button", { name: `Unpause VMI ${vm}`, exact: true }).click();
    await until(60000, () => text(editor, phase), async () => (await text(editor, phase)) === "Running");
  });

  await step("the VM's detail page shows conditions, disks and events", async () => {
    await editor.getByRole("link", { name: vm, exact: true }).first().click();
    await editor.locator("#conditions tbody th", { hasText: "Ready" }).first().waitFor({ timeout: 15000 });
    await editor.locator('#disks tbody tr[data-disk="rootdisk"]').waitFor({ timeout: 5000 });
    await until(30000, () => text(editor, "#events tbody"), async () => (await editor.locator("#events tbody tr th").count()) > 0);
  });

  await step("the serial console answers echo $((6*7)) with 42", async () => {
    await editor.goto(new URL(`#/ns/${ns}/vmi/${vm}/console`, editor.url()).href);
    await editor.evaluate(() => { window.vireoTestMarker = "same page"; });
    await consoleAnswers(editor);
  });

  await step("Paste types the clipboard into the serial console", async () => {
    await editor.evaluate(() => navigator.clipboard.writeText("echo $((5*9))"));
    await editor.getByRole("button", { name: "Paste", exact: true }).click();
    // The page reads the clipboard asynchronously: Enter goes once the guest echoed the text.
    await until(10000, async () => `the terminal shows:\n${await terminalText(editor)}`, async () =>
      /echo \$\(\(5\*9\)\)/.test(await terminalText(editor)));
    await editor.locator(".xterm-helper-textarea").focus();
    await editor.keyboard.press("Enter");
    await until(20000, async () => `the terminal shows:\n${await terminalText(editor)}`, async () =>
      /^45\s*$/m.test(await terminalText(editor)));
  });

  await step("the console reconnects without reloading the page", async () => {
    await editor.locator("#reconnect").click();
    await editor.locator("#terminal[data-state=connected]").waitFor({ timeout: 30000 });
    await consoleAnswers(editor);
    if (await editor.evaluate(() => window.vireoTestMarker) !== "same page") throw new Error("the page was reloaded");
  });

  const displayURL = new URL(`#/ns/${ns}/vmi/${vm}/display`, config.editorURL).href;
  const a = await openPage(displayURL, "display-a");
  const b = await openPage(displayURL, "display-b");
  await step("two pages show the display at once", async () => {
    for (const [name, page] of [["a", a], ["b", b]]) {
      await page.locator("#vnc[data-state=connected]").waitFor({ timeout: 30000 });
      await until(30000, async () => `page ${name}: ${JSON.stringify(await canvasStats(page))}`, async () => (await canvasStats(page)).colours >= 2);
      await page.evaluate(() => {
        const c = document.querySelector("#vnc canvas");
        window.vireoFirst = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      });
      await savePNG(page, `vnc-${name}-1.png`);
    }
  });

  await step("both pages update when the guest's display changes", async () => {
    // The guest's shell is on the serial line; it writes to the VGA console (tty0).
    await editor.locator(".xterm-helper-textarea").focus();
    await editor.keyboard.type("printf '\\033[2J\\033[H\\n\\n  VIREO-WEB-CONSOLE-SECOND-FRAME\\n' > /dev/tty0");
    await editor.keyboard.press("Enter");
    for (const [name, page] of [["a", a], ["b", b]]) {
      await until(30000, async () => `page ${name} changed ${await changedPixels(page)} pixels`, async () => (await changedPixels(page)) > 500);
      await quiet(page, name);
      await savePNG(page, `vnc-${name}-2.png`);
    }
  });

  await step("Send Ctrl-Alt-Del reaches the guest, and both pages follow its reboot", async () => {
    // The tiny guest's init leaves the kernel's Ctrl-Alt-Del action as it is: reboot at once.
    await a.locator("#send-cad").click();
    await until(5000, () => text(a, "main [role=status]"), async () => /Sent Ctrl\+Alt\+Del/.test(await text(a, "main [role=status]")));
    // Booted again: init writes the VGA screen, then the marker on the serial line.
    await until(150000, async () => `the terminal shows:\n${await terminalText(editor)}`, async () =>
      /VIREO-GUEST-READY/.test(await terminalText(editor)));
    for (const [name, page] of [["a", a], ["b", b]]) {
      await quiet(page, name);
      await savePNG(page, `vnc-${name}-3.png`);
    }
  });

  await step("a view user sees the list but the server's 403 on the console", async () => {
    const viewer = await openPage(config.viewerURL, "viewer");
    await viewer.goto(new URL(`#/ns/${ns}`, viewer.url()).href);
    await viewer.locator(`#vms tbody tr[data-name="${vm}"]`).waitFor({ timeout: 15000 });
    await viewer.goto(new URL(`#/ns/${ns}/vmi/${vm}/console`, viewer.url()).href);
    await until(20000, () => text(viewer, "main [role=status]"), async () =>
      /Refused \(403 Forbidden\): .*forbidden.*virtualmachineinstances\/console/.test(await text(viewer, "main [role=status]")));
    result.viewerConsole = await text(viewer, "main [role=status]");
  });
}

/** consoleAnswers types echo $((6*7)) into the terminal until a line of its own says 42. */
async function consoleAnswers(page) {
  await page.locator("#terminal[data-state=connected]").waitFor({ timeout: 30000 });
  await page.evaluate(() => { window.vireoTyped = 0; });
  let lastTry = 0;
  await until(150000, async () => `the terminal shows:\n${await terminalText(page)}`, async () => {
    if (/^42\s*$/m.test(await terminalText(page))) return true;
    if (Date.now() - lastTry > 3000) {
      lastTry = Date.now();
      await page.locator(".xterm-helper-textarea").focus();
      await page.keyboard.press("Control+C");
      await page.keyboard.type("echo $((6*7))");
      await page.keyboard.press("Enter");
    }
    return false;
  });
  // Cleared, so that the next check needs a new answer.
  await page.locator("button", { hasText: "Clear scrollback" }).click();
  await until(5000, () => terminalText(page), async () => !/^42\s*$/m.test(await terminalText(page)));
}

function terminalText(page) {
  return page.evaluate(() => [...document.querySelectorAll(".xterm-rows > div")].map((r) => r.textContent.replace(/\u00a0/g, " ")).join("\n"));
}

function canvasStats(page) {
  return page.evaluate(() => {
    const c = document.querySelector("#vnc canvas");
    if (!c || !c.width) return { colours: 0 };
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length && seen.size < 16; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return { width: c.width, height: c.height, colours: seen.size };
  });
}

/** quiet waits until page's canvas stops changing (a blinking cursor aside: two equal polls). */
async function quiet(page, name) {
  let previous = -1;
  await until(20000, async () => `page ${name} still changing`, async () => {
    const now = await changedPixels(page);
    const same = now === previous;
    previous = now;
    return same;
  });
}

function changedPixels(page) {
  return page.evaluate(() => {
    const c = document.querySelector("#vnc canvas");
    const now = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const first = window.vireoFirst;
    if (!first || first.length !== now.length) return now.length / 4;
    let n = 0;
    for (let i = 0; i < now.length; i += 4) {
      if (now[i] !== first[i] || now[i + 1] !== first[i + 1] || now[i + 2] !== first[i + 2]) n++;
    }
    return n;
  });
}

async function savePNG(page, name) {
  const url = await page.evaluate(() => document.querySelector("#vnc canvas").toDataURL("image/png"));
  await writeFile(join(config.outDir, name), Buffer.from(url.split(",")[1], "base64"));
}

let code = 0;
try {
  await run();
  if (pageErrors.length) throw new Error(`uncaught errors in the pages:\n${pageErrors.join("\n")}`);
  log("all steps passed");
} catch (err) {
  console.error(`FAIL ${err.message}`);
  result.error = err.message;
  code = 1;
} finally {
  result.totalMs = Date.now() - started;
  await writeFile(join(config.outDir, "result.json"), JSON.stringify(result, null, 2));
  await browser.close();
}
process.exit(code);
