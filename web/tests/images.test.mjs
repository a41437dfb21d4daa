// Images in chat, in headless Chromium against a real server and the scripted mock model: a
// chart screenshot pasted (or dropped) onto the chat input is uploaded, shown as a removable
// chip, sent with the message (the mock answers differently when the request carries an image)
// and shown as a thumbnail in the run, live and from the stored history.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, newPage, closeBrowser, screenshot, SHOW_DEMO_AGENTS } from './harness.mjs';

// A real 1×1 PNG, so the thumbnail decodes.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const script = {
  turns: [
    { match: { last_user_contains: 'build me this', has_image: true }, steps: [{ type: 'text', text: 'I can see your chart.' }] },
    { match: { last_user_contains: 'build me this', has_image: false }, steps: [{ type: 'text', text: 'I see no image.' }] },
  ],
};

let server;

before(async () => {
  server = await startServer({ script });
});

after(async () => {
  await closeBrowser();
  await server?.close();
});

/** Dispatches a paste (or a drop on the composer) of a PNG file named `name`. */
async function give(page, how, name) {
  await page.evaluate(({ b64, how, name }) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], name, { type: 'image/png' }));
    if (how === 'paste') {
      const ev = new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true });
      document.querySelector('textarea.chat-input').dispatchEvent(ev);
    } else {
      const composer = document.querySelector('.chat-composer');
      composer.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      composer.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, { b64: PNG, how, name });
}

test('a pasted chart reaches the model and stays in the chat as a thumbnail', async () => {
  // demoModePlain is a demo agent: listed once the preference is on.
  const page = await newPage({ storage: SHOW_DEMO_AGENTS });
  await page.goto(server.url);
  await page.selectOption('select.chat-agent', 'demoModePlain');

  // A dropped image can be removed again before sending.
  await give(page, 'drop', 'other.png');
  await page.waitForSelector('.chat-attachment[data-status="ready"]');
  await page.click('.chat-attachment button');
  assert.equal(await page.locator('.chat-attachment').count(), 0);

  await give(page, 'paste', 'chart.png');
  const chip = page.locator('.chat-attachment[data-status="ready"]');
  await chip.waitFor();
  const uploadId = await chip.getAttribute('data-upload-id');
  assert.match(uploadId, /^[0-9a-f]{64}$/);
  await screenshot(page, 'image-attached');

  await page.fill('textarea.chat-input', 'build me this');
  await page.click('.chat-send');
  await page.waitForSelector('.chat-run[data-status="complete"]', { timeout: 30_000 });
  assert.match(await page.locator('.chat-content').last().innerText(), /I can see your chart/);
  assert.equal(await page.locator('.chat-attachment').count(), 0, 'the chips went with the message');
  const thumb = page.locator(`.chat-run .chat-thumb[data-upload-id="${uploadId}"] img`);
  await thumb.waitFor();
  await page.waitForFunction((id) => document.querySelector(`.chat-thumb[data-upload-id="${id}"] img`)?.naturalWidth === 1, uploadId);

  // Without an image the same words get the other answer: the image is what the model saw.
  await page.fill('textarea.chat-input', 'build me this again');
  await page.click('.chat-send');
  await page.waitForFunction(() => document.querySelectorAll('.chat-run[data-status="complete"]').length === 2);
  assert.match(await page.locator('.chat-content').last().innerText(), /I see no image/);

  // The stored history shows the thumbnail on the first run only.
  await page.reload();
  await page.waitForSelector(`.chat-run .chat-thumb[data-upload-id="${uploadId}"] img`, { timeout: 30_000 });
  assert.equal(await page.locator('.chat-run .chat-thumb').count(), 1);
  await screenshot(page, 'image-history');
  assert.deepEqual(page.errors, []);
  await page.close();
});
