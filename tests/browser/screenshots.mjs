// Takes the README's screenshots of a running resetctl's status page in
// Debian's headless chromium (playwright-core), the browser's clock frozen
// at the server's `--now`: 1280x800 light and 390x844 dark, in English and
// in Chinese (fonts-noto-cjk, installed by `make test-deps`, draws 中文).
// Run by tests/browser/screenshots.sh (`make screenshots`).
//
// Usage: node screenshots.mjs ORIGIN OUT_DIR BROWSER_DIR CHROMIUM NOW

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [origin, outDir, browserDir, executablePath, now] = process.argv.slice(2);
const require = createRequire(join(browserDir, 'package.json'));
const { chromium } = require('playwright-core');

const SHOTS = [
  { width: 1280, height: 800, colorScheme: 'light' },
  { width: 390, height: 844, colorScheme: 'dark' },
];

const browser = await chromium.launch({ executablePath, headless: true });
try {
  for (const shot of SHOTS) {
    for (const lang of ['en', 'zh']) {
      const context = await browser.newContext({
        viewport: { width: shot.width, height: shot.height },
        colorScheme: shot.colorScheme,
        timezoneId: 'UTC',
        locale: lang === 'en' ? 'en-US' : 'zh-CN',
      });
      await context.clock.install({ time: new Date(now) });
      const page = await context.newPage();
      await page.goto(`${origin}/${lang}/`, { waitUntil: 'load' });
      const suffix = lang === 'en' ? '' : '-zh';
      const path = join(outDir, `status-page-${shot.width}-${shot.colorScheme}${suffix}.png`);
      await page.screenshot({ path, fullPage: true });
      process.stdout.write(`${path}\n`);
      await context.close();
    }
  }
} finally {
  await browser.close();
}
