// Bundles the browser app into OUTDIR: index.html, assets/app.js, assets/app.css, each also
// precompressed (.br, .gz) so the server can send them without compressing per request.
// Usage: node build.mjs OUTDIR [--watch]   (cargo's build.rs calls it with OUT_DIR/web)
import { build, context } from 'esbuild';
import { mkdir, readFile, writeFile, rm } from 'node:fs/promises';
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
  target: 'es2022',
  outdir: join(outdir, 'assets'),
  minify: !watch,
  sourcemap: watch ? 'linked' : false,
  legalComments: 'linked',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
};

async function writeShell() {
  await mkdir(outdir, { recursive: true });
  const html = await readFile(join(here, 'index.html'));
  await writeFile(join(outdir, 'index.html'), html);
}

async function compressAll() {
  for (const file of ['index.html', 'assets/app.js', 'assets/app.css']) {
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
  await compressAll();
}
