// The web console's browser test: headless Debian Chromium driven by playwright-core against a
// running `vireoctl ui` (test/e2e/webui_test.go starts the cluster side and reads the results).
// Configuration: the JSON file named by VIREO_UI_TEST (see Config). Each step polls with a
// deadline; the first failure ends the run with exit code 1 and says what the page showed.
// Writes to config.outDir: result.json (timings) and vnc-{a,b}-{1,2,3}.png: each display page's
// canvas at first, after the guest wrote to its screen, and at the end (after the reboot
// Ctrl-Alt-Del caused, a soft reboot, a migration and the guest writing again).
//
// Config: {
//   editorURL, viewerURL: the URLs vireoctl ui printed for a user with edit in ns, and with view;
//   ns, otherNs: the user's namespace and one holding otherVM, which they may not see;
//   vm: a stopped VM in ns, whose tiny test guest (test/images) the test starts;
//   dvVM: a VirtualMachine (JSON) the test creates in ns, whose dataVolumeTemplate imports slowly;
//   outDir, chromium: the browser's path (default /usr/bin/chromium)
// }
import { AxeBuilder } from "@axe-core/playwright";
import { chromium } from "playwright-core";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const config = JSON.parse(await readFile(process.env.VIREO_UI_TEST, "utf8"));
const result = { steps: {}, accessibility: {} };
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
// a11yProblems are axe-core's findings on each page checked, reported together at the end.
const a11yProblems = [];
// websockets counts the websockets each page opened, by page name: a page that reconnected by
// itself opened one more.
const websockets = {};

/** openPage opens url in a context of its own (its own window, never a hidden tab). */
async function openPage(url, name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(url).origin });
  const page = await context.newPage();
  page.on("pageerror", (err) => pageErrors.push(`${name}: ${err.message}`));
  websockets[name] = 0;
  page.on("websocket", () => { websockets[name]++; });
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

  // How fast it loads is measured by make bench (vmibench's web console phase, against the same
  // assets from a plain file server), not asserted here: a busy machine's timings say nothing.
  await step("the page loads, and the token leaves the address", async () => {
    const nav = await editor.evaluate(() => JSON.parse(JSON.stringify(performance.getEntriesByType("navigation")[0])));
    result.loadMs = Math.round(nav.loadEventEnd - nav.startTime);
    if (!(nav.loadEventEnd > 0)) throw new Error("the page's load event did not fire");
    if (new URL(editor.url()).searchParams.has("token")) throw new Error(`the token stayed in the address: ${editor.url()}`);
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
    await accessible(editor, "namespace");
  });

  await step("the keyboard reaches the controls, each with a visible focus ring", async () => {
    // From the page's first control (the skip link) through the header, the namespace form
    // and the VM's row, as far as Tab goes before it leaves the page (the body gets focus).
    await editor.locator("a.skip").focus();
    const rings = [];
    for (let i = 0; i < 14; i++) {
      const ring = await focusRing(editor);
      if (ring.startsWith("BODY")) break;
      rings.push(ring);
    }
    result.focusRings = rings;
    if (rings.some((r) => r.endsWith("no ring"))) throw new Error(`a focused control shows no focus ring: ${JSON.stringify(rings)}`);
    if (!rings.some((r) => r.startsWith("BUTTON"))) throw new Error(`Tab never reached a button: ${JSON.stringify(rings)}`);
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
    await accessible(editor, "VM detail");
  });

  await step("the serial console answers echo $((6*7)) with 42", async () => {
    await editor.goto(new URL(`#/ns/${ns}/vmi/${vm}/console`, editor.url()).href);
    await editor.evaluate(() => { window.vireoTestMarker = "same page"; });
    await consoleAnswers(editor);
    await accessible(editor, "serial console");
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

  await step("Copy selection puts the selected line on the clipboard", async () => {
    await editor.evaluate(() => navigator.clipboard.writeText("nothing copied yet"));
    const row = await terminalRow(editor, /^45\s*$/);
    // A triple click selects the line, as in any terminal.
    await editor.mouse.click(row.x + 4, row.y + row.height / 2, { clickCount: 3 });
    await editor.getByRole("button", { name: "Copy selection", exact: true }).click();
    await until(5000, () => text(editor, "main [role=status]"), async () =>
      /Copied \d+ characters/.test(await text(editor, "main [role=status]")));
    result.copied = await editor.evaluate(() => navigator.clipboard.readText());
    if (result.copied.trim() !== "45") throw new Error(`the clipboard holds ${JSON.stringify(result.copied)}, not the selected line 45`);
  });

  await step("a German keyboard types what its keys say, and composed text arrives as UTF-8", async () => {
    // Key events as Chromium on Linux reports a German (QWERTZ) layout: the key the layout
    // produced and the position (code) of the key on a US keyboard, which differ for z, y, the
    // brackets, * and AltGr's @. A console that read code would type y for z.
    const cdp = await editor.context().newCDPSession(editor);
    await editor.locator(".xterm-helper-textarea").focus();
    await editor.keyboard.press("Control+C");
    for (const key of germanKeys("echo $((6*7))zy@")) await pressKey(cdp, key);
    // What an IME or a dead key composes comes as text without a key of its own.
    await editor.keyboard.insertText("äß€");
    await editor.keyboard.press("Enter");
    await until(20000, async () => `the terminal shows:\n${await terminalText(editor)}`, async () =>
      /^42zy@äß€\s*$/m.test(await terminalText(editor)));
    await cdp.detach();
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
      await keepFrame(page);
      await savePNG(page, `vnc-${name}-1.png`);
    }
    await accessible(a, "display");
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
      await keepFrame(page);
    }
  });

  await step("Ctrl+Alt+F2 and Ctrl+Alt+F1 from the Keys menu switch the guest's virtual terminal", async () => {
    // Writing to tty2 allocates the guest's second virtual terminal (the kernel switches only
    // to allocated ones).
    await consoleRun(editor, "echo '  VIREO-SECOND-TERMINAL' > /dev/tty2; echo WROTE-$((2*2))", /^WROTE-4\s*$/m);
    for (const [vt, label] of [["tty2", "Ctrl+Alt+F2"], ["tty1", "Ctrl+Alt+F1"]]) {
      await a.selectOption("#vnc-combo", { label });
      await a.getByRole("button", { name: "Send keys", exact: true }).click();
      await until(5000, () => text(a, "main [role=status]"), async () => (await text(a, "main [role=status]")).includes(`Sent ${label}.`));
      await consoleRun(editor, "cat /sys/class/tty/tty0/active", new RegExp(`^${vt}\\s*$`, "m"));
      for (const [name, page] of [["a", a], ["b", b]]) {
        // tty2 shows its own line; back on tty1 the frame is the one before (a cursor aside).
        await until(20000, async () => `page ${name} on ${vt} changed ${await changedPixels(page)} pixels`, async () => {
          const changed = await changedPixels(page);
          return vt === "tty2" ? changed > 500 : changed < 100;
        });
      }
    }
  });

  await step("Scale to window fits the display into a small window; unticked it shows it at its size", async () => {
    await a.setViewportSize({ width: 560, height: 600 });
    await until(5000, async () => `page a: ${JSON.stringify(await canvasFit(a))}`, async () => {
      const fit = await canvasFit(a);
      return fit.shown < fit.width && fit.shown <= fit.container + 1;
    });
    await a.locator("#vnc-scale").uncheck();
    await until(5000, async () => `page a: ${JSON.stringify(await canvasFit(a))}`, async () => {
      const fit = await canvasFit(a);
      return Math.abs(fit.shown - fit.width) <= 1;
    });
    await a.locator("#vnc-scale").check();
    await a.setViewportSize({ width: 1280, height: 900 });
  });

  const lister = await openPage(new URL(`#/ns/${ns}`, config.editorURL).href, "lister");
  await lister.locator(`#vmis tbody tr[data-name="${vm}"]`).waitFor({ timeout: 15000 });

  await step("Soft reboot reboots the guest (through its agent)", async () => {
    await editor.locator("button", { hasText: "Clear scrollback" }).click();
    await lister.getByRole("button", { name: `Soft reboot VMI ${vm}`, exact: true }).click();
    await until(10000, () => text(lister, ".action-status"), async () =>
      /Soft reboot VMI .*: accepted/.test(await text(lister, ".action-status")));
    await until(150000, async () => `the terminal shows:\n${await terminalText(editor)}`, async () =>
      /VIREO-GUEST-READY/.test(await terminalText(editor)));
  });

  await step("Restart gives the VM a new VMI; the console and both displays follow it by themselves", async () => {
    const phase = `#vmis tbody tr[data-name="${vm}"] [data-col=phase]`;
    const opened = { ...websockets };
    let left = false;
    await lister.getByRole("button", { name: `Restart VM ${vm}`, exact: true }).click();
    await until(10000, () => text(lister, ".action-status"), async () =>
      /Restart VM .*: accepted/.test(await text(lister, ".action-status")));
    // The old VMI goes (its row leaves Running or disappears), a new one comes to Running.
    await until(180000, async () => `VMI ${vm}: ${await text(lister, phase)}`, async () => {
      const now = await text(lister, phase);
      if (now !== "Running") left = true;
      return left && now === "Running";
    });
    await reconnected(opened, [["editor", editor, "#terminal"], ["display-a", a, "#vnc"], ["display-b", b, "#vnc"]]);
    await consoleAnswers(editor);
  });

  await step("Migrate moves the VMI to the other node; the console and both displays reconnect by themselves", async () => {
    const nodeCell = `#vmis tbody tr[data-name="${vm}"] [data-col=node]`;
    const before = await text(lister, nodeCell);
    const opened = { ...websockets };
    await lister.getByRole("button", { name: `Migrate VMI ${vm}`, exact: true }).click();
    await until(10000, () => text(lister, ".action-status"), async () =>
      /Migrate VMI .*: accepted/.test(await text(lister, ".action-status")));
    await until(180000, async () => `the VMI's node is ${await text(lister, nodeCell)} (was ${before})`, async () => {
      const now = await text(lister, nodeCell);
      return now !== before && /\S/.test(now) && now !== "(absent)";
    });
    result.migration = { from: before, to: await text(lister, nodeCell) };
    await reconnected(opened, [["editor", editor, "#terminal"], ["display-a", a, "#vnc"], ["display-b", b, "#vnc"]]);
    result.reconnects = Object.fromEntries(Object.keys(opened).map((k) => [k, websockets[k] - opened[k]]));
    await consoleAnswers(editor);
    // The displays show the guest on its new node: it writes, both pages follow.
    await consoleRun(editor, "printf '\\033[2J\\033[H\\n\\n\\n\\n\\n\\n\\n  VIREO-MIGRATED-FRAME: THE GUEST MOVED\\n  TO ANOTHER NODE\\n' > /dev/tty0; echo DONE-$((3*3))", /^DONE-9\s*$/m);
    for (const [name, page] of [["a", a], ["b", b]]) {
      await until(30000, async () => `page ${name} changed ${await changedPixels(page)} pixels`, async () => (await changedPixels(page)) > 500);
      await quiet(page, name);
      await savePNG(page, `vnc-${name}-3.png`);
    }
  });

  await step("a DataVolume's import progress is shown while it runs, then Stop stops its VM", async () => {
    // The user creates it through the console's server with their own rights (the UI has no
    // form for it): its import starts at once, slowly enough to be watched.
    const dvVM = config.dvVM.metadata.name;
    const status = await lister.evaluate(async ({ path, body }) => {
      const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body });
      return `${res.status} ${await res.text()}`;
    }, { path: `/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines`, body: JSON.stringify(config.dvVM) });
    if (!status.startsWith("201")) throw new Error(`creating VM ${dvVM}: ${status}`);
    await lister.goto(new URL(`#/ns/${ns}/vm/${dvVM}`, config.editorURL).href);
    const dv = `[data-dv="${dvVM}-root"]`;
    // Every change the page showed, in order (a phase shown again after another counts again).
    const shown = [];
    await until(180000, async () => `the page showed ${shown.join(" | ")}`, async () => {
      const now = await text(lister, dv);
      if (now !== "(absent)" && now !== shown.at(-1)) shown.push(now);
      return /: Succeeded 100\.0%$/.test(now);
    });
    result.importShown = shown;
    const between = shown.filter((s) => /ImportInProgress (\d+\.\d+)%$/.test(s) && !/ (0\.0|100\.0)%$/.test(s));
    if (between.length === 0) throw new Error(`no progress between 0 and 100% was shown: ${shown.join(" | ")}`);
    // Once in progress, the import only moves on: no phase before it comes back.
    const phases = shown.map((s) => s.split(": ")[1].split(" ")[0]);
    const started = phases.indexOf("ImportInProgress");
    if (phases.slice(started).some((p) => p !== "ImportInProgress" && p !== "Succeeded")) {
      throw new Error(`the import went back after it was in progress: ${shown.join(" | ")}`);
    }
    if (await lister.locator(`progress[aria-label="Import of ${dvVM}-root"]`).count() !== 1) throw new Error("no progress bar");
    await lister.goto(new URL(`#/ns/${ns}`, config.editorURL).href);
    const vmStatus = `#vms tbody tr[data-name="${dvVM}"] [data-col=status]`;
    await lister.getByRole("button", { name: `Stop VM ${dvVM}`, exact: true }).click();
    await until(90000, () => text(lister, vmStatus), async () => (await text(lister, vmStatus)) === "Stopped");
  });

  await step("a view user sees the list but the server's 403 on the console", async () => {
    const viewer = await openPage(config.viewerURL, "viewer");
    await viewer.goto(new URL(`#/ns/${ns}`, viewer.url()).href);
    await viewer.locator(`#vms tbody tr[data-name="${vm}"]`).waitFor({ timeout: 15000 });
    await viewer.goto(new URL(`#/ns/${ns}/vmi/${vm}/console`, viewer.url()).href);
    await until(20000, () => text(viewer, "main [role=status]"), async () =>
      /Refused \(403 Forbidden\): .*forbidden.*virtualmachineinstances\/console/.test(await text(viewer, "main [role=status]")));
    result.viewerConsole = await text(viewer, "main [role=status]");
    await accessible(viewer, "refused console");
  });
}

/**
 * accessible runs axe-core's WCAG 2.1 A and AA rules (contrast, names, roles, labels) on what
 * page shows now; violations are kept for the end of the run, so one run reports every page's.
 */
async function accessible(page, name) {
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  result.accessibility[name] = violations.map((v) => v.id);
  for (const v of violations) {
    const where = v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ");
    a11yProblems.push(`${name} page: ${v.id} (${v.impact}): ${v.help}: ${where}`);
  }
}

/** focusRing tabs to the next control of page and describes it and its focus outline. */
async function focusRing(page) {
  await page.keyboard.press("Tab");
  return page.evaluate(() => {
    const el = document.activeElement;
    const style = getComputedStyle(el);
    const width = Number.parseFloat(style.outlineWidth);
    const what = `${el.tagName}${el.id ? "#" + el.id : ""} "${(el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40)}"`;
    return style.outlineStyle !== "none" && width >= 2 ? `${what}: ${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}` : `${what}: no ring`;
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

/**
 * reconnected waits until each [name, page, selector] opened a websocket since the counts in
 * opened, nobody pressing Reconnect, and is connected again.
 */
async function reconnected(opened, pages) {
  for (const [name, page, sel] of pages) {
    await until(90000, async () => `${name}: ${websockets[name] - opened[name]} new sockets, ${await text(page, "main [role=status]")}`, async () =>
      websockets[name] > opened[name] && (await page.locator(`${sel}[data-state=connected]`).count()) === 1);
  }
}

/** consoleRun clears the terminal, runs command in the guest's shell and waits for re. */
async function consoleRun(page, command, re, ms = 20000) {
  await page.locator("button", { hasText: "Clear scrollback" }).click();
  await page.locator(".xterm-helper-textarea").focus();
  await page.keyboard.type(command);
  await page.keyboard.press("Enter");
  await until(ms, async () => `${command}: the terminal shows:\n${await terminalText(page)}`, async () => re.test(await terminalText(page)));
}

/** terminalRow is the bounding box of the last terminal row whose text matches re. */
async function terminalRow(page, re) {
  const rows = page.locator(".xterm-rows > div");
  for (let i = (await rows.count()) - 1; i >= 0; i--) {
    const row = rows.nth(i);
    if (re.test((await row.textContent()).replace(/\u00a0/g, " "))) return row.boundingBox();
  }
  throw new Error(`no terminal row matches ${re}: ${await terminalText(page)}`);
}

// germanLayout maps a character to the key a German (QWERTZ) keyboard types it with: the
// position's code on a US keyboard, the Windows key code Chromium reports, and the modifiers
// (8: Shift). AltGr reaches a page on Linux as no modifier at all.
const germanLayout = {
  " ": ["Space", 32, 0], $: ["Digit4", 52, 8], "(": ["Digit8", 56, 8], ")": ["Digit9", 57, 8],
  "*": ["BracketRight", 187, 8], z: ["KeyY", 90, 0], y: ["KeyZ", 89, 0], "@": ["KeyQ", 81, 0],
};

/** germanKeys are the key events that type s on a German keyboard. */
function germanKeys(s) {
  return [...s].map((ch) => {
    if (germanLayout[ch]) {
      const [code, keyCode, modifiers] = germanLayout[ch];
      return { key: ch, code, keyCode, modifiers };
    }
    if (/[0-9]/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), modifiers: 0 };
    if (/[a-x]/.test(ch)) return { key: ch, code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0), modifiers: 0 };
    throw new Error(`no German key for ${ch}`);
  });
}

/** pressKey presses and releases one key through the DevTools protocol, as the OS reports it. */
async function pressKey(cdp, { key, code, keyCode, modifiers }) {
  const common = { key, code, modifiers, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode };
  await cdp.send("Input.dispatchKeyEvent", { type: "keyDown", text: key, unmodifiedText: key, ...common });
  await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...common });
}

/** keepFrame makes page's canvas now the frame changedPixels compares with. */
function keepFrame(page) {
  return page.evaluate(() => {
    const c = document.querySelector("#vnc canvas");
    window.vireoFirst = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  });
}

/** canvasFit is the canvas's width in pixels, its width on the page and its container's. */
function canvasFit(page) {
  return page.evaluate(() => {
    const c = document.querySelector("#vnc canvas");
    return { width: c.width, shown: c.getBoundingClientRect().width, container: document.querySelector("#vnc").getBoundingClientRect().width };
  });
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
  if (a11yProblems.length) throw new Error(`accessibility (axe-core, WCAG 2.1 AA):\n${a11yProblems.join("\n")}`);
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
