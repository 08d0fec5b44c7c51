// The web console's page-load benchmark, run by vmibench's web console phase (make bench): headless
// Debian Chromium driven by playwright-core loads the console from a running `vireoctl ui` server
// and, in turn, the same assets from a plain file server (the baseline), each time in a fresh
// browser context (empty cache, no cookie: the console's load includes the token exchange).
// Configuration: the JSON file named by VIREO_UI_BENCH:
//   { consoleURL: the URL the console's server printed (with its token),
//     staticURL: the file server's URL, ns: a namespace whose VMs the console lists,
//     vms: how many VMs ns holds, runs: loads of each, chromium: the browser's path,
//     out: the file the timings are written to }
// Per run, in milliseconds from the navigation's start (the browser's own clock):
//   consoleLoad, staticLoad: the load event's end;
//   consoleRows: until the namespace's VM table shows all of its VMs;
//   listFetch: one list of the namespace's VMs fetched from the loaded page, through the same
//     proxy (the table's floor: what the API answer alone costs).
import { chromium } from "playwright-core";
import { readFile, writeFile } from "node:fs/promises";

const config = JSON.parse(await readFile(process.env.VIREO_UI_BENCH, "utf8"));
const browser = await chromium.launch({
  executablePath: config.chromium || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

/** loadMs is the end of the page's load event, from its navigation's start. */
const loadMs = (page) => page.evaluate(() => performance.getEntriesByType("navigation")[0].loadEventEnd);

/** inFreshContext runs fn on a new page of a new browser context, which it then closes. */
async function inFreshContext(fn) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    return await fn(await context.newPage());
  } finally {
    await context.close();
  }
}

async function consoleRun() {
  return inFreshContext(async (page) => {
    await page.goto(`${config.consoleURL}#/ns/${encodeURIComponent(config.ns)}`);
    const load = await loadMs(page);
    // Polled on every animation frame: the moment the table holds every VM, on the page's clock.
    const rows = await page.waitForFunction((n) => document.querySelectorAll("#vms tbody tr[data-name]").length >= n && performance.now(),
      config.vms, { polling: "raf", timeout: 30000 });
    const listFetch = await page.evaluate(async (ns) => {
      const t0 = performance.now();
      const resp = await fetch(`/apis/kubevirt.io/v1/namespaces/${encodeURIComponent(ns)}/virtualmachines`);
      if (!resp.ok) throw new Error(`list of VMs: ${resp.status}`);
      await resp.json();
      return performance.now() - t0;
    }, config.ns);
    return { consoleLoad: load, consoleRows: await rows.jsonValue(), listFetch };
  });
}

async function staticRun() {
  return inFreshContext(async (page) => {
    await page.goto(config.staticURL);
    return { staticLoad: await loadMs(page) };
  });
}

const runs = [];
try {
  // One load of each first, unmeasured: the browser's own start-up is no part of a page's load.
  await consoleRun();
  await staticRun();
  for (let i = 0; i < config.runs; i++) {
    // The two take turns, and which goes first alternates, so that drift hits both alike.
    const [a, b] = i % 2 === 0 ? [consoleRun, staticRun] : [staticRun, consoleRun];
    runs.push({ ...(await a()), ...(await b()) });
  }
} finally {
  await browser.close();
}
await writeFile(config.out, JSON.stringify({ runs }, null, 1));
