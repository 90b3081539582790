// Drives the status page of a running resetctl in Debian's headless
// chromium (playwright-core), with the browser's clock frozen at the
// server's `--now`, and prints one JSON report on stdout. The Rust test
// (tests/site_page.rs) starts the server, runs this script and judges the
// report; this script only looks and clicks.
//
// Usage: node site_page.mjs ORIGIN OUT_DIR BROWSER_DIR CHROMIUM NOW
//   NOW  the instant the server is frozen at (ISO 8601)
//
// What it reports:
// - per viewport (1280x800 light, 390x844 dark) and language (/en/, /zh/):
//   the verdict (and the line about a schedule due after the day's
//   confirmed reset), whether the next reset and the history show, horizontal
//   overflow (outside scrolling areas), dates and times that wrap, the
//   width of the label column of each list of facts, the heatmap's month
//   and weekday labels, legend, cell titles and scroll position, the
//   visible text (for raw identifiers), the countdown before and after the
//   page's clock moves 3 s, axe-core's violations, console errors, every
//   request made, a full-page screenshot; a history "details" link
//   (click, then the record page's path, h1 and axe-core's violations);
// - the verdict in two time zones (Asia/Tokyo, America/New_York);
// - the page 31 hours after NOW (the check is then too old): the verdict
//   and whether the operator note shows;
// - the language switch (click, then the new page's lang and verdict);
// - every dialog any page opened (hostile record texts must open none).

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [origin, outDir, browserDir, executablePath, now] = process.argv.slice(2);
const require = createRequire(join(browserDir, 'package.json'));
const { chromium } = require('playwright-core');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800, colorScheme: 'light' },
  { name: 'phone', width: 390, height: 844, colorScheme: 'dark' },
];

const dialogs = [];

// A page with the browser's clock frozen at NOW, in `timezoneId`.
async function open(browser, options, at = new Date(now)) {
  const context = await browser.newContext(options);
  await context.clock.install({ time: at });
  const page = await context.newPage();
  const consoleErrors = [];
  const requests = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  page.on('request', (req) => requests.push(req.url()));
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  return { context, page, consoleErrors, requests };
}

function measure() {
  const vw = document.documentElement.clientWidth;
  // An element past the viewport's edge widens the page unless an
  // ancestor below <body> scrolls or clips it (the heatmap on a phone).
  const clipped = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      // An <svg> clips its own drawing; the question is what holds the <svg>.
      if (e instanceof HTMLElement && getComputedStyle(e).overflowX !== 'visible') {
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
      overflowing.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : ''));
    }
  }
  // A date, a time or a parenthesised date that breaks over two lines
  // has more than one client rect.
  const wrapped = [...document.querySelectorAll('time, .nowrap, [data-local-of]')]
    .filter((el) => el.textContent.trim() !== '' && el.getClientRects().length > 1)
    .map((el) => el.textContent);
  // The share of each list of facts that its label column takes.
  const labelShares = [...document.querySelectorAll('dl.facts')].map((dl) => {
    const dt = dl.querySelector('dt');
    return dt ? dt.getBoundingClientRect().width / dl.getBoundingClientRect().width : 0;
  });
  const scroller = document.querySelector('.heatmap-scroll');
  const grid = document.getElementById('heatmap');
  const cellTitles = {};
  for (const rect of document.querySelectorAll('#heatmap rect[data-count]')) {
    cellTitles[rect.getAttribute('data-count')] = rect.querySelector('title').textContent;
  }
  // The visible text without record texts and code, where raw ids would show.
  const body = document.body.cloneNode(true);
  body.querySelectorAll('blockquote, code, script').forEach((e) => e.remove());
  const verdict = document.getElementById('verdict');
  const note = document.getElementById('operator-note');
  const later = document.getElementById('verdict-later');
  return {
    innerWidth: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    overflowing: overflowing.slice(0, 20),
    wrapped,
    labelShares,
    months: [...document.querySelectorAll('#heatmap text.month')].map((t) => t.textContent),
    weekdays: [...document.querySelectorAll('.heatmap-days text')].map((t) => t.textContent),
    legend: (document.getElementById('heatmap-legend') || {}).textContent ?? null,
    cellTitles,
    heatmapScrolls: !!scroller && scroller.scrollWidth > scroller.clientWidth + 1,
    // The newest week is in view: the grid's right edge is the scroller's.
    heatmapAtNewest: !!scroller && !!grid &&
      Math.abs(grid.getBoundingClientRect().right - scroller.getBoundingClientRect().right) < 1.5,
    text: body.innerText,
    title: document.title,
    siteName: (document.getElementById('site-name') || {}).textContent ?? null,
    operatorNote: note ? (note.hidden ? 'hidden' : note.textContent) : null,
    lang: document.documentElement.lang,
    verdict: verdict && verdict.getAttribute('data-verdict'),
    verdictText: verdict && verdict.textContent,
    verdictVisible: !!verdict && verdict.getBoundingClientRect().height > 0,
    // The line about a schedule due after the day's confirmed reset (null: hidden).
    verdictLater: later && !later.hidden ? later.textContent : null,
    question: (document.getElementById('verdict-question') || {}).textContent ?? null,
    nextShown: !!document.getElementById('next-heading'),
    nextLocal: (document.querySelector('[data-local-of="next-start"]') || {}).textContent ?? null,
    historyItems: document.querySelectorAll('#history li').length,
    quotes: [...document.querySelectorAll('blockquote')].map((q) => q.textContent),
    countdown: (document.getElementById('countdown') || {}).textContent ?? null,
  };
}

async function axe(page) {
  await page.evaluate(axeSource + '\n;0');
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return result;
}

const report = { playwrightCore: require('playwright-core/package.json').version, viewports: [], zones: {} };
const browser = await chromium.launch({ executablePath, headless: true });
report.browser = browser.version();
try {
  for (const vp of VIEWPORTS) {
    for (const lang of ['en', 'zh']) {
      const { context, page, consoleErrors, requests } = await open(browser, {
        viewport: { width: vp.width, height: vp.height },
        colorScheme: vp.colorScheme,
        timezoneId: 'UTC',
        locale: lang === 'en' ? 'en-US' : 'zh-CN',
      });
      const response = await page.goto(origin + `/${lang}/`, { waitUntil: 'load' });
      const before = await page.evaluate(measure);
      await page.clock.runFor(3000);
      const after = await page.evaluate(measure);
      const violations = await axe(page);
      const screenshot = join(outDir, `site-${lang}-${vp.width}x${vp.height}-${vp.colorScheme}.png`);
      await page.screenshot({ path: screenshot, fullPage: true });
      // A history item's own page.
      await Promise.all([page.waitForURL('**/records/**'), page.click('#history li a[href*="/records/"]')]);
      const record = await page.evaluate(() => ({
        path: location.pathname,
        h1: document.querySelector('h1').textContent,
        fields: document.querySelectorAll('#record dt').length,
      }));
      const recordLayout = await page.evaluate(measure);
      const recordViolations = await axe(page);
      report.viewports.push({
        name: vp.name,
        width: vp.width,
        langPath: lang,
        status: response.status(),
        ...before,
        countdownAfter: after.countdown,
        violations,
        record,
        recordLayout: { wrapped: recordLayout.wrapped, labelShares: recordLayout.labelShares, overflowing: recordLayout.overflowing, text: recordLayout.text },
        recordViolations,
        screenshot,
        consoleErrors,
        requests,
      });
      await context.close();
    }
  }
  {
    // 31 hours on, the check made 2 hours before NOW is too old.
    const later = new Date(new Date(now).getTime() + 31 * 3600 * 1000);
    const { context, page } = await open(browser, { timezoneId: 'UTC', locale: 'en-US' }, later);
    await page.goto(origin + '/en/', { waitUntil: 'load' });
    report.overdue = await page.evaluate(measure);
    await context.close();
  }
  for (const timezoneId of ['Asia/Tokyo', 'America/New_York']) {
    const { context, page } = await open(browser, { timezoneId, locale: 'en-US' });
    await page.goto(origin + '/en/', { waitUntil: 'load' });
    report.zones[timezoneId] = await page.evaluate(measure);
    await context.close();
  }
  {
    const { context, page } = await open(browser, { timezoneId: 'UTC', locale: 'en-US' });
    await page.goto(origin + '/en/', { waitUntil: 'load' });
    await Promise.all([page.waitForURL('**/zh/'), page.click('header a[hreflang="zh-Hans"]')]);
    report.switched = { path: await page.evaluate(() => location.pathname), ...(await page.evaluate(measure)) };
    report.switchedViolations = await axe(page);
    await context.close();
  }
} finally {
  await browser.close();
}
report.dialogs = dialogs;
process.stdout.write(JSON.stringify(report) + '\n');
