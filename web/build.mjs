// Bundles the browser app into OUTDIR: index.html, assets/app.js (the entry), the chunks it
// loads (assets/*-HASH.js: esbuild's code splitting, so the signed-in app, the share-link page
// and the heavy editing parts — CodeMirror, gridstack — are fetched only when used), and
// assets/app.css, every one also precompressed (.br, .gz) so the server can send them without
// compressing per request (it serves any file under assets/); and the
// API reference page, docs.html, with Swagger UI's prebuilt bundle from the npm package
// `swagger-ui-dist` (assets/swagger-ui-bundle.js, assets/swagger-ui.css) and docs.js, which
// points it at the server's /openapi.json.
// Usage: node build.mjs OUTDIR [--watch]   (cargo's build.rs calls it with OUT_DIR/web)
import { build, context } from 'esbuild';
import { copyFile, mkdir, readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const outdir = process.argv[2];
const watch = process.argv.includes('--watch');
if (!outdir) {
  console.error('usage: node build.mjs OUTDIR [--watch]');
  process.exit(2);
}
const here = new URL('.', import.meta.url).pathname;

const options = {
  entryPoints: { app: join(here, 'src/main.js') },
  bundle: true,
  format: 'esm',
  // Dynamic import()s become chunks of their own (main.js's app/share-link split, the code
  // editor, Arrange's gridstack); code two of them share goes into a chunk-HASH.js.
  splitting: true,
  chunkNames: '[name]-[hash]',
  target: 'es2022',
  outdir: join(outdir, 'assets'),
  minify: !watch,
  sourcemap: watch ? 'linked' : false,
  legalComments: 'linked',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
};

async function writeShell() {
  await mkdir(join(outdir, 'assets'), { recursive: true });
  for (const page of ['index.html', 'docs.html']) {
    await writeFile(join(outdir, page), await readFile(join(here, page)));
  }
  await copyFile(join(here, 'src/docs.js'), join(outdir, 'assets/docs.js'));
  const swagger = join(here, 'node_modules/swagger-ui-dist');
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    await copyFile(join(swagger, file), join(outdir, 'assets', file));
  }
}

/**
 * esbuild puts all the CSS the entry reaches, through dynamic imports too, into app.css (the
 * one stylesheet index.html links) and also writes a stylesheet per lazily loaded chunk that
 * nothing links: those are dropped.
 */
async function dropUnlinkedCss() {
  for (const file of await readdir(join(outdir, 'assets'))) {
    if (file.endsWith('.css') && file !== 'app.css' && file !== 'swagger-ui.css') {
      await rm(join(outdir, 'assets', file));
    }
  }
}

async function compressAll() {
  const assets = (await readdir(join(outdir, 'assets'))).filter((f) => /\.(js|css)$/.test(f));
  const files = ['index.html', 'docs.html', ...assets.map((f) => `assets/${f}`)];
  for (const file of files) {
    const path = join(outdir, file);
    const body = await readFile(path);
    await writeFile(`${path}.br`, brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }));
    await writeFile(`${path}.gz`, gzipSync(body, { level: 9 }));
  }
}

await rm(outdir, { recursive: true, force: true });
await writeShell();
if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  console.log(`watching web/src -> ${outdir} (index.html is copied once)`);
} else {
  await build(options);
  await dropUnlinkedCss();
  await compressAll();
}
