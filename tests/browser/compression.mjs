// Fetches paths of a running resetctl in Debian's headless chromium
// (driven by playwright-core), as the page and its scripts would: the
// status page by navigation, everything else by fetch() from that page.
// Prints one JSON report: per path, the Accept-Encoding chromium sent,
// the Content-Encoding it got, and the SHA-256 of the body chromium
// decoded. The Rust test (tests/compression.rs) judges it.
//
// Usage: node compression.mjs ORIGIN OUT_DIR BROWSER_DIR CHROMIUM PATHS_JSON

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [origin, , browserDir, executablePath, pathsJson] = process.argv.slice(2);
const require = createRequire(join(browserDir, 'package.json'));
const { chromium } = require('playwright-core');
const paths = JSON.parse(pathsJson);

const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
const page = await browser.newPage();
const sent = new Map();
// The headers each request went out with, as a promise (read at the end).
page.on('request', (request) => {
  const url = new URL(request.url());
  sent.set(url.pathname + url.search, request.allHeaders());
});
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
const results = [];
const navigation = await page.goto(origin + '/en/');
results.push({
  path: '/en/',
  status: navigation.status(),
  contentEncoding: (await navigation.allHeaders())['content-encoding'] ?? null,
  sha256: sha(await navigation.body()),
});
// The pages forbid scripts to connect anywhere (their CSP): fetch from a
// document without one, on the same origin.
await page.goto(origin + '/healthz');
for (const path of paths) {
  const got = await page.evaluate(async (p) => {
    const r = await fetch(p, { cache: 'no-store' });
    return {
      status: r.status,
      contentEncoding: r.headers.get('content-encoding'),
      bytes: Array.from(new Uint8Array(await r.arrayBuffer())),
    };
  }, path);
  results.push({ path, status: got.status, contentEncoding: got.contentEncoding, sha256: sha(Buffer.from(got.bytes)) });
}
for (const r of results) r.acceptEncoding = (await sent.get(r.path))?.['accept-encoding'] ?? null;
console.log(JSON.stringify({ browser: browser.version(), results }));
await browser.close();
