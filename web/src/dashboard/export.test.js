// Unit tests of export and import's pure pieces (no DOM): node --test web/src/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvOffered, csvPath, exportFileName, fileNameFromDisposition, readImport, renderFileName, renderPath } from './export.js';

test('the export file is named after the dashboard, safe for any file system', () => {
  assert.equal(exportFileName('Crypto desk'), 'Crypto desk.boardsmith.json');
  assert.equal(exportFileName('BTC/ETH: spread?'), 'BTC-ETH- spread.boardsmith.json');
  assert.equal(exportFileName('  ../etc/passwd  '), 'etc-passwd.boardsmith.json');
  assert.equal(exportFileName('a\u0000b\tc\nd'), 'a-b-c-d.boardsmith.json');
  assert.equal(exportFileName(''), 'dashboard.boardsmith.json');
  assert.equal(exportFileName(undefined), 'dashboard.boardsmith.json');
  assert.equal(exportFileName('...'), 'dashboard.boardsmith.json');
  assert.equal(exportFileName('Gold 金价'), 'Gold 金价.boardsmith.json');
  assert.equal(exportFileName('x'.repeat(300)), `${'x'.repeat(100)}.boardsmith.json`);
});

test('the CSV file takes the server’s name', () => {
  assert.equal(fileNameFromDisposition('attachment; filename="btc-price.csv"', 'p.csv'), 'btc-price.csv');
  assert.equal(fileNameFromDisposition('attachment; filename=plain.csv', 'p.csv'), 'plain.csv');
  assert.equal(fileNameFromDisposition("attachment; filename*=UTF-8''gold%20%E9%87%91.csv; filename=\"gold.csv\"", 'p.csv'), 'gold 金.csv');
  assert.equal(fileNameFromDisposition(null, 'p.csv'), 'p.csv');
  assert.equal(fileNameFromDisposition('attachment', 'p.csv'), 'p.csv');
});

test('every data-shaped panel type offers CSV; an unknown type does not', () => {
  for (const t of ['line', 'candlestick', 'table', 'metric_card', 'pie', 'feed']) assert.equal(csvOffered(t), true, t);
  assert.equal(csvOffered('html'), false);
  assert.equal(csvOffered(undefined), false);
  assert.equal(csvPath('db_1', 'a b'), '/api/dashboards/db_1/panels/a%20b/csv');
});

test('an import file must be JSON; what it holds is the server’s to judge', () => {
  assert.deepEqual(readImport('{"format":"boardsmith.dashboard"}'), { format: 'boardsmith.dashboard' });
  assert.deepEqual(readImport('[1]'), [1]);
  assert.throws(() => readImport('not json', '“x.txt”'), /^Error: “x\.txt” is not a JSON file: /);
});

test('a rendered file: its route per format, and a safe name when the server gives none', () => {
  assert.equal(renderPath('db_1', 'pdf'), '/api/dashboards/db_1/render?format=pdf');
  assert.equal(renderPath('a b', 'png'), '/api/dashboards/a%20b/render?format=png');
  assert.equal(renderFileName('BTC/ETH: spread?', 'pdf'), 'BTC-ETH- spread.pdf');
  assert.equal(renderFileName('', 'png'), 'dashboard.png');
  assert.equal(fileNameFromDisposition('attachment; filename="probe-desk-2026-11-30.png"', 'x.png'), 'probe-desk-2026-11-30.png');
});
