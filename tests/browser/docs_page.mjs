// Loads the docs page of a running resetctl in Debian's headless chromium,
// driven by playwright-core, at a desktop and a phone width; saves a
// full-page screenshot of each, runs axe-core, and prints one JSON report on stdout. The
// Rust test (tests/docs_page.rs) starts the server, runs this script and
// asserts the report; this script only measures, it judges nothing.
//
// Usage: node docs_page.mjs ORIGIN OUT_DIR BROWSER_DIR CHROMIUM [PATH]
//   ORIGIN       the server, e.g. http://127.0.0.1:40123
//   OUT_DIR      where the screenshots go
//   BROWSER_DIR  the folder `make test-deps` installed playwright-core into
//   CHROMIUM     the browser binary (/usr/bin/chromium)
//   PATH         the page (default /openapi/v1/docs; /openapi/v1/docs/zh in Chinese)

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [origin, outDir, browserDir, executablePath, pagePath] = process.argv.slice(2);
const require = createRequire(join(browserDir, 'package.json'));
const { chromium } = require('playwright-core');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const PATH = pagePath ?? '/openapi/v1/docs';

// Runs in the page: everything the report needs from the rendered document.
function measure() {
  const vw = document.documentElement.clientWidth;
  const label = (el) =>
    el.tagName.toLowerCase() +
    (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) parts.unshift(label(e));
    return parts.join(' > ');
  };
  // An element sticking out of the viewport widens the page unless an
  // ancestor below <body> clips or scrolls it horizontally.
  const clipped = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const ox = getComputedStyle(e).overflowX;
      if (ox !== 'visible') {
        const r = e.getBoundingClientRect();
        return r.left >= -0.5 && r.right <= vw + 0.5;
      }
    }
    return false;
  };
  const overflowing = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if ((r.right > vw + 0.5 || r.left < -0.5) && !clipped(el)) {
      overflowing.push({ element: path(el), left: Math.round(r.left), right: Math.round(r.right) });
    }
  }
  // Scroll containers (table wrappers, code blocks) that actually scroll:
  // allowed, reported so a reader of the test log sees where they are.
  const scrollers = [];
  for (const el of document.body.querySelectorAll('*')) {
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
      scrollers.push(path(el));
    }
  }
  const alternate = document.querySelector('link[rel="alternate"][type="application/atom+xml"]');
  const text = document.body.innerText;
  return {
    innerWidth: window.innerWidth,
    clientWidth: vw,
    scrollWidth: document.documentElement.scrollWidth,
    bodyScrollWidth: document.body.scrollWidth,
    overflowing: overflowing.slice(0, 20),
    overflowingCount: overflowing.length,
    scrollers,
    originSlots: [...document.querySelectorAll('[data-origin]')].map((e) => e.textContent),
    placeholders: (text.match(/example\.com|your-instance\.example/g) || []).length,
    // The URL of every curl command in the examples.
    curlUrls: [...document.querySelectorAll('pre')].flatMap((pre) =>
      pre.innerText
        .split('\n')
        .filter((line) => /^\s*curl\b/.test(line))
        .map((line) => (line.match(/https?:\/\/[^\s'"]+/) || ['(none)'])[0]),
    ),
    atomAlternate: alternate ? { href: alternate.href, title: alternate.getAttribute('title') } : null,
  };
}

// axe-core's violations of WCAG 2.1 A and AA and its best practices, as
// the status page is checked (site_page.mjs).
async function axe(page) {
  await page.evaluate(axeSource + '\n;0');
  return page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
}

const report = { playwrightCore: require('playwright-core/package.json').version, viewports: [] };
const browser = await chromium.launch({ executablePath, headless: true });
report.browser = browser.version();
try {
  for (const vp of VIEWPORTS) {
    const page = await browser.newPage({
      viewport: { width: vp.width, height: vp.height },
      colorScheme: 'light',
    });
    const consoleErrors = [];
    const requests = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(String(err)));
    page.on('request', (req) => requests.push(req.url()));
    const response = await page.goto(origin + PATH, { waitUntil: 'load' });
    const headers = await response.allHeaders();
    // What a hash-based Content-Security-Policy must list for the page's
    // inline blocks, so a failure can say which hash went stale.
    const inline = await page.evaluate(() => ({
      scripts: [...document.querySelectorAll('script:not([src])')].map((e) => e.textContent),
      styles: [...document.querySelectorAll('style')].map((e) => e.textContent),
    }));
    const sha = (s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;
    const lang = PATH.split('/').pop() === 'zh' ? '-zh' : '';
    const screenshot = join(outDir, `docs-${vp.width}x${vp.height}${lang}.png`);
    await page.screenshot({ path: screenshot, fullPage: true });
    report.viewports.push({
      name: vp.name,
      width: vp.width,
      height: vp.height,
      status: response.status(),
      contentSecurityPolicy: headers['content-security-policy'] ?? null,
      inlineScriptHashes: inline.scripts.map(sha),
      inlineStyleHashes: inline.styles.map(sha),
      screenshot,
      consoleErrors,
      requests,
      ...(await page.evaluate(measure)),
      violations: await axe(page),
    });
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report) + '\n');
