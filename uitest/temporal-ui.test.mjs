// Browser test of the Temporal Web UI (2.42) against a running dev stack:
// the example supervisor `wiki` is listed by its search attribute, its
// current details (the markdown summary of workflows/supervisor_status.go)
// show whole, its task groups show as children, and a screenshot of it
// lands in docs/img/temporal-ui.png.
//
// `make test-ui` starts the stack and runs this through uitest/run.sh. By
// hand, with `make dev` running: node --test uitest/
//
// Environment: TEMPORAL_UI_URL (default http://localhost:8233),
// UITEST_SUPERVISOR (default wiki), UITEST_SCREENSHOT (default
// docs/img/temporal-ui.png), CHROMIUM (default /usr/bin/chromium).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const uiURL = (process.env.TEMPORAL_UI_URL || 'http://localhost:8233').replace(/\/$/, '');
const supervisor = process.env.UITEST_SUPERVISOR || 'wiki';
const workflowID = `supervisor/${supervisor}`;
const screenshotPath = path.resolve(root, process.env.UITEST_SCREENSHOT || 'docs/img/temporal-ui.png');
const failurePath = path.join(root, '.dev', 'uitest-failure.png');
const namespace = 'default';
const timeout = 30_000;

let context, page, userDataDir;
const blocked = new Set(); // requests to anywhere but this machine, aborted
let failed = null; // the first step that failed: later steps skip

// Only this machine: the UI, its /render iframe, data: and blob: URLs.
function local(url) {
	if (!/^https?:|^wss?:/.test(url.protocol)) return url.protocol === 'data:' || url.protocol === 'blob:';
	return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

before(async () => {
	userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-uitest-'));
	context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: [
			'--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
		],
		viewport: { width: 1440, height: 900 },
		timezoneId: 'UTC',
		locale: 'en-US',
	});
	context.setDefaultTimeout(timeout);
	context.setDefaultNavigationTimeout(timeout);
	await context.route((url) => !local(url), (route) => {
		blocked.add(route.request().url());
		return route.abort('blockedbyclient');
	});
	page = context.pages()[0] ?? (await context.newPage());
});

after(async () => {
	if (blocked.size > 0) {
		console.log(`blocked ${blocked.size} request(s) off this machine:\n  ${[...blocked].join('\n  ')}`);
	}
	await context?.close();
	if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
});

// step runs one part of the walk through the UI; the first failure saves a
// screenshot and prints the page's text, and the steps after it skip.
function step(name, fn) {
	test(name, async (t) => {
		if (failed) {
			t.skip(`an earlier step failed: ${failed}`);
			return;
		}
		try {
			await fn(t);
		} catch (err) {
			failed = name;
			await dumpPage(name);
			throw err;
		}
	});
}

async function dumpPage(name) {
	try {
		fs.mkdirSync(path.dirname(failurePath), { recursive: true });
		await page.screenshot({ path: failurePath, fullPage: true, timeout: 10_000 });
		console.error(`step "${name}" failed at ${page.url()}; screenshot: ${path.relative(root, failurePath)}`);
	} catch (err) {
		console.error(`step "${name}" failed; no screenshot: ${err.message}`);
	}
	try {
		const text = await page.locator('body').innerText({ timeout: 5_000 });
		console.error(`--- page text ---\n${text.slice(0, 20_000)}\n--- end of page text ---`);
		for (const frame of page.frames().slice(1)) {
			const ft = await frame.locator('body').innerText({ timeout: 2_000 }).catch(() => '');
			if (ft) console.error(`--- iframe ${frame.url().slice(0, 80)} ---\n${ft.slice(0, 5_000)}`);
		}
	} catch (err) {
		console.error(`no page text: ${err.message}`);
	}
}

// appear waits for locator to be visible, reloading the page now and then:
// the UI reads visibility (search attributes, children) once per load, and
// visibility lags the workflow a little.
async function appear(locator, { within = timeout, reloadEvery = 10_000 } = {}) {
	const deadline = Date.now() + within;
	for (;;) {
		const left = deadline - Date.now();
		try {
			await locator.first().waitFor({ state: 'visible', timeout: Math.max(1, Math.min(reloadEvery, left)) });
			return;
		} catch (err) {
			if (Date.now() >= deadline) throw err;
			console.log(`not visible yet, reloading ${page.url()}: ${locator}`);
			await page.reload({ waitUntil: 'domcontentloaded' });
		}
	}
}

// eventually retries fn (which returns a value or throws) until it stops
// throwing, then returns its value; the last error after the timeout.
async function eventually(fn, within = timeout) {
	const deadline = Date.now() + within;
	for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
		try {
			return await fn();
		} catch (err) {
			if (Date.now() >= deadline) throw err;
			await new Promise((r) => setTimeout(r, delay));
		}
	}
}

// The Workflow ID link of a row and of the Relationships tab: its text is
// the id, and it opens the run's history.
const workflowLink = (scope, id) => scope.getByRole('link', { name: id, exact: true });
const historyHref = new RegExp(`^/namespaces/${namespace}/workflows/([^/?#]+)/[^/?#]+/history$`);

step(`the workflows list filtered by Supervisor = "${supervisor}" shows ${workflowID} and nothing unrelated`, async () => {
	const query = `Supervisor = "${supervisor}"`;
	await page.goto(`${uiURL}/namespaces/${namespace}/workflows?query=${encodeURIComponent(query)}`);
	const rows = page.getByTestId('workflows-summary-configurable-table-row');
	await appear(workflowLink(rows, workflowID));

	// The filter the UI applied is the one in the URL: a chip (a button that
	// opens the filter's editor) reading Supervisor = "wiki".
	const chip = await page.locator('button[aria-controls^="dropdown-filter-chip-Supervisor"]').first().innerText();
	assert.match(chip, new RegExp(`Supervisor\\s*=\\s*"${supervisor}"`));

	// Every row is this supervisor (any of its runs) or one of its task groups.
	const ids = [];
	for (const row of await rows.all()) {
		const hrefs = await row.locator('a[href]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
		const m = hrefs.map((h) => historyHref.exec(h)).find(Boolean);
		assert.ok(m, `a row without a workflow link: ${await row.innerText()}`);
		ids.push(decodeURIComponent(m[1]));
	}
	assert.ok(ids.includes(workflowID), `rows: ${ids.join(', ')}`);
	const unrelated = ids.filter((id) => id !== workflowID && !id.startsWith(`${workflowID}/`));
	assert.deepEqual(unrelated, [], `unrelated workflows listed: ${unrelated.join(', ')}`);
});

step(`${workflowID} opens from the list`, async () => {
	const rows = page.getByTestId('workflows-summary-configurable-table-row');
	await workflowLink(rows, workflowID).first().click();
	await page.waitForURL(new RegExp(`/workflows/${encodeURIComponent(workflowID)}/[^/]+/history`));
	const heading = page.getByTestId('workflow-id-heading');
	await heading.waitFor({ state: 'visible' });
	assert.match(await heading.innerText(), new RegExp(`^\\s*${workflowID}\\s*$`));
});

step(`its Relationships tab lists the child workflow ${workflowID}/group-0`, async () => {
	await page.getByTestId('relationships-tab').click();
	await page.waitForURL(/\/relationships$/);
	// The tree's table: the parent's row, then one row per child, each with
	// its id as a link to its history.
	await appear(workflowLink(page.locator('main'), `${workflowID}/group-0`));
	const href = await workflowLink(page.locator('main'), `${workflowID}/group-0`).first().getAttribute('href');
	assert.match(href, new RegExp(`/workflows/${encodeURIComponent(`${workflowID}/group-0`)}/`));
});

step('its User Metadata tab shows the current details: the state and the datasource', async () => {
	await page.getByTestId('user-metadata-tab').click();
	await page.waitForURL(/\/user-metadata$/);
	// "Current Details" is a heading beside "Summary" and "Details"; the
	// markdown renders in an iframe (/render?content=...) in its panel. The
	// Summary panel has an iframe too, so take the one nearest the heading.
	const panel = page.locator('xpath=//h3[normalize-space()="Current Details"]/ancestor::div[.//iframe][1]');
	await panel.waitFor({ state: 'visible' });
	const body = panel.frameLocator('iframe').first().locator('body');
	const text = await eventually(async () => {
		const t = await body.innerText({ timeout: 5_000 });
		assert.match(t, /\b(RUNNING|IDLE)\b/, `current details: ${JSON.stringify(t)}`);
		assert.match(t, /datasource/, `current details: ${JSON.stringify(t)}`);
		return t;
	});
	// The first line leads with the state in bold, then names the two
	// figures starter status shows.
	const bold = await body.locator('strong').first().innerText();
	assert.match(bold, /^(RUNNING|IDLE)$/, `current details: ${JSON.stringify(text)}`);
	assert.match(text, /datasource\s+\S+/, `current details: ${JSON.stringify(text)}`);
	assert.match(text, /lag \d+ · unpublished \d+/, `current details: ${JSON.stringify(text)}`);
});

step('the last line of the current details shows whole on the page, not cut off by its panel', async () => {
	const panel = page.locator('xpath=//h3[normalize-space()="Current Details"]/ancestor::div[.//iframe][1]');
	const iframe = panel.locator('iframe').first();
	await iframe.scrollIntoViewIfNeeded();
	const frame = await (await iframe.elementHandle()).contentFrame();
	// The last block with text (the details end with a paragraph of a
	// no-break space, there to take the panel's cut), where it is in the
	// frame, and what the frame shows at its bottom edge.
	const last = await frame.evaluate(() => {
		const blocks = [...document.querySelectorAll('main > *')].filter((e) => e.innerText.trim() !== '');
		const el = blocks.at(-1);
		const r = el.getBoundingClientRect();
		const hit = document.elementFromPoint(r.left + 1, r.bottom - 1);
		return { text: el.innerText, top: r.top, bottom: r.bottom, frameHeight: window.innerHeight, hitsIt: !!hit && el.contains(hit) };
	});
	assert.match(last.text, /^lag = latest − current/, `the details' last line: ${JSON.stringify(last)}`);
	assert.ok(last.bottom <= last.frameHeight, `the last line ends at ${last.bottom}px, the panel's frame shows ${last.frameHeight}px: ${JSON.stringify(last.text)}`);
	assert.ok(last.hitsIt, `the last line's bottom edge is not what the frame shows there: ${JSON.stringify(last)}`);
	// And the page shows the frame there: no ancestor clips it, nothing covers it.
	const box = await iframe.boundingBox();
	const onPage = await page.evaluate(([x, y]) => {
		const el = document.elementFromPoint(x, y);
		return { tag: el?.tagName ?? null, viewport: window.innerHeight };
	}, [box.x + 2, box.y + last.bottom - 1]);
	assert.equal(onPage.tag, 'IFRAME', `the page at the last line's bottom edge (${box.y + last.bottom - 1}px of ${onPage.viewport}px) shows ${onPage.tag}`);
});

step(`a full-page screenshot is saved to ${path.relative(root, screenshotPath)}`, async () => {
	fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
	await page.screenshot({ path: screenshotPath, fullPage: true });
	assert.ok(fs.statSync(screenshotPath).size > 10_000);
});
