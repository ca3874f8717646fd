/** Headless Chromium for the browser tests, and Swagger UI's "Try it out" driven as a person does it. */
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';

/** Where CI's `apt-get install chromium` (Debian) puts it, and the Ubuntu name, unless CHROMIUM_PATH says. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = candidates.find(
    (path): path is string => path !== undefined && path !== '' && existsSync(path),
  );
  if (found === undefined) {
    throw new Error(
      "The browser test needs Chromium: install Debian's chromium package (apt-get install chromium), " +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable',
    );
  }
  return found;
}

/**
 * Runs "Try it out" on GET /v1/words/{word}; resolves with the status, the body, and the whole answer
 * Swagger UI shows (its response headers included).
 */
export async function tryGetWord(
  page: Page,
  word: string,
): Promise<{ status: number; body: string; shown: string }> {
  const operation = page.locator('#operations-default-get_v1_words_word');
  const execute = operation.locator('button.execute');
  if (!(await execute.isVisible())) {
    if (!(await operation.locator('.opblock-body').isVisible()))
      await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
  }
  await operation.locator('tr[data-param-name="word"] input').fill(word);
  const live = operation.locator('.live-responses-table');
  // Clear the answer of an earlier run, so the one read below is this run's.
  const clear = operation.locator('button.btn-clear');
  if (await clear.isVisible()) {
    await clear.click();
    await live.waitFor({ state: 'detached' });
  }
  await execute.click();
  const answer = live.locator('tr.response');
  const status = answer.locator('.response-col_status');
  await status.waitFor();
  const body = await answer.locator('.response-col_description pre').first().textContent();
  return {
    status: Number((await status.textContent())?.trim()),
    body: body ?? '',
    shown: (await answer.textContent()) ?? '',
  };
}
