// Generates src/generated/openapi.ts from the repository's docs/openapi.json with openapi-typescript
// (pinned in package.json). `node scripts/generate.mjs` writes it (`npm run generate`, `make ts-client`);
// `--check` writes nothing and exits 1 when the committed file differs from what would be generated.
import { readFile, writeFile } from "node:fs/promises";
import openapiTS, { astToString } from "openapi-typescript";

const SOURCE = new URL("../../../docs/openapi.json", import.meta.url);
const TARGET = new URL("../src/generated/openapi.ts", import.meta.url);
const BANNER = `/**
 * Generated from docs/openapi.json by openapi-typescript: do not edit.
 * Regenerate with \`make ts-client\` (or \`npm run generate\` in clients/typescript).
 */

`;

const document = JSON.parse(await readFile(SOURCE, "utf8"));
const generated = BANNER + astToString(await openapiTS(document));

if (process.argv.includes("--check")) {
  const committed = await readFile(TARGET, "utf8").catch(() => "");
  if (committed !== generated) {
    console.error("src/generated/openapi.ts is stale relative to docs/openapi.json: run `make ts-client`");
    process.exit(1);
  }
  console.log("src/generated/openapi.ts is fresh");
} else {
  await writeFile(TARGET, generated);
  console.log("wrote src/generated/openapi.ts");
}
