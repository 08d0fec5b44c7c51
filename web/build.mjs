// Builds the web console into ../internal/webui/assets/dist, which vireoctl embeds:
// index.html, app.js (the entry) with its chunks (loaded on demand: console, display),
// app.css, and THIRD-PARTY-LICENSES.txt. Reproducible: the same sources and lockfile give
// the same bytes (no timestamps; chunk names are content hashes; no source paths in the output).
import * as esbuild from "esbuild";
import { mkdir, readFile, readdir, rm, writeFile, copyFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { termCSS } from "./src/theme.js";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "internal", "webui", "assets", "dist");

// The third-party code bundled into app.js and its chunks, whose licenses ship beside it.
const bundled = ["@xterm/xterm", "@xterm/addon-fit", "@novnc/novnc"];

async function main() {
  await clean();
  await esbuild.build({
    absWorkingDir: here,
    entryPoints: [{ in: "src/main.js", out: "app" }, { in: "src/style.css", out: "app" }],
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    target: ["chrome111", "firefox115", "safari16.4"],
    minify: true,
    chunkNames: "chunks/[name]-[hash]",
    legalComments: "none",
    charset: "utf8",
    logLevel: "warning",
  });
  // xterm.js's colours, which its own <style> elements cannot set under the CSP (theme.js).
  const css = join(out, "app.css");
  await writeFile(css, (await readFile(css, "utf8")) + termCSS());
  await copyFile(join(here, "src", "index.html"), join(out, "index.html"));
  await writeFile(join(out, "THIRD-PARTY-LICENSES.txt"), await licenses());
}

/** clean empties the output directory but for .gitkeep (go:embed needs a file there). */
async function clean() {
  await mkdir(out, { recursive: true });
  for (const name of await readdir(out)) {
    if (name !== ".gitkeep") await rm(join(out, name), { recursive: true, force: true });
  }
}

async function licenses() {
  const parts = [];
  for (const pkg of bundled) {
    const dir = join(here, "node_modules", pkg);
    const meta = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    const file = (await readdir(dir)).filter((n) => /^licen[cs]e/i.test(n)).sort()[0];
    const text = file ? await readFile(join(dir, file), "utf8") : `license: ${meta.license}`;
    parts.push(`${pkg} ${meta.version} (${meta.license})\n\n${text.trim()}\n`);
  }
  return parts.join("\n" + "-".repeat(72) + "\n\n");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
