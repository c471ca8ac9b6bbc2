import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

/** The dashboard is served by the API at /dashboard/ (services/api/middleware/dashboard-assets.ts). */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Charts are a separate chunk, loaded while the first numbers already show.
    chunkSizeWarningLimit: 250,
    reportCompressedSize: false,
  },
});
