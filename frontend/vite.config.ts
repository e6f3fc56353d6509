import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { writeFileSync } from 'node:fs';

// The build goes to dist/, which the Go binary embeds (embed.go). dist/.keep is
// committed so that the binary compiles before the UI is built: put it back after Vite
// empties the directory.
export default defineConfig({
  plugins: [
    svelte(),
    {
      name: 'keep-dist-keep',
      apply: 'build',
      closeBundle() {
        writeFileSync('dist/.keep', '');
      },
    },
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The manifest tells scripts/budget.mjs which files the main UI loads.
    manifest: true,
    chunkSizeWarningLimit: 1000, // GraphiQL's bundle (650 KB, its own page) is expected
    // Two pages: the UI, and GraphiQL (graphiql/main.js, React), which only its own
    // page loads: served at GET /graphql, outside the UI's bundle and budget.
    rollupOptions: {
      input: { main: 'index.html', graphiql: 'graphiql.html' },
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return; // React's "use client" in GraphiQL's packages
        warn(warning);
      },
    },
  },
  server: {
    // The UI's own files, and docs/ for the test that keeps the docs' MCP snippets equal
    // to the UI's (lib/connect.test.ts).
    fs: { allow: ['.', '../docs'] },
    proxy: {
      '/api': { target: 'http://127.0.0.1:8080', ws: true },
      '/graphql': 'http://127.0.0.1:8080',
      // Team mode's sign-in (set --public-url to Vite's address to sign in through it).
      '/login': 'http://127.0.0.1:8080',
      '/auth/callback': 'http://127.0.0.1:8080',
      '/logout': 'http://127.0.0.1:8080',
    },
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts'],
  },
});
