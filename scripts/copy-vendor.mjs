// Copies the browser builds of our npm dependencies into static/vendor/ so that
// Django (WhiteNoise / collectstatic) serves them: the pages never touch a CDN.
// static/vendor/ is git-ignored; `npm ci` / `npm install` re-creates it.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "static", "vendor");

const files = {
  "d3/dist/d3.min.js": "d3.min.js",
  "mermaid/dist/mermaid.min.js": "mermaid.min.js",
};

mkdirSync(target, { recursive: true });
for (const [from, to] of Object.entries(files)) {
  copyFileSync(join(root, "node_modules", from), join(target, to));
  console.log(`vendor: node_modules/${from} -> static/vendor/${to}`);
}
