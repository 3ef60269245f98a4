// Copies the browser builds of our npm dependencies into static/vendor/ so that
// Django (WhiteNoise / collectstatic) serves them: the pages never touch a CDN.
// static/vendor/ is git-ignored; `npm ci` / `npm install` re-creates it.
import { copyFileSync, cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "static", "vendor");

// The sequence diagram needs only d3's selections (select, append, attr, data/join): the
// d3-selection build is 13 kB where the whole of d3 is 280 kB, ~20-50 ms of script evaluation
// on the run page's opening.
const files = {
  "d3-selection/dist/d3-selection.min.js": "d3-selection.min.js",
  "mermaid/dist/mermaid.min.js": "mermaid.min.js",
  // Chinese glyphs for machines without a CJK font (a stock Debian or a minimal Linux shows
  // boxes otherwise): Noto Sans SC, split by the font's publisher into ~100 unicode-range
  // slices, so a page downloads only the slices of the characters it shows.
  "@fontsource-variable/noto-sans-sc/index.css": "noto-sans-sc/noto-sans-sc.css",
  "@fontsource-variable/noto-sans-sc/LICENSE": "noto-sans-sc/LICENSE",
  "yaml/LICENSE": "yaml/LICENSE",
};
const folders = {
  "@fontsource-variable/noto-sans-sc/files": "noto-sans-sc/files",
  // The scenario builder's YAML view (static/js/builder-yaml.js): the package's browser build, ES
  // modules the page imports as they are (static/vendor/yaml/index.js), no bundler needed.
  "yaml/browser/dist": "yaml",
};

rmSync(target, { recursive: true, force: true }); // nothing left over from an older dependency
mkdirSync(target, { recursive: true });
for (const [from, to] of Object.entries(files)) {
  mkdirSync(dirname(join(target, to)), { recursive: true });
  copyFileSync(join(root, "node_modules", from), join(target, to));
  console.log(`vendor: node_modules/${from} -> static/vendor/${to}`);
}
for (const [from, to] of Object.entries(folders)) {
  cpSync(join(root, "node_modules", from), join(target, to), { recursive: true });
  console.log(`vendor: node_modules/${from}/ -> static/vendor/${to}/`);
}
