// The real AIInfraGuide site's configuration, minus its theme: the same site,
// base, integrations and Markdown plugins, so the changelog page is rendered
// exactly as there.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'astro/config';
import tailwind from '@astrojs/tailwind';
import sitemap from '@astrojs/sitemap';
import rehypeSlug from 'rehype-slug';
import rehypeAutolinkHeadings from 'rehype-autolink-headings';
import rehypeExternalLinks from 'rehype-external-links';
import remarkMath from 'remark-math';
import rehypeKatex from 'rehype-katex';

// Astro copies public/ into dist/ as is, dot-files included. infrafeed keeps
// its bookkeeping in public/feeds/ (.infrafeed-manifest, .infrafeed-ids) for
// the next `npm run feeds`, and, only while a build runs or after one was
// killed, its next tree (public/.feeds.infrafeed-next) and its journal: none
// of them is a page of the site, so they are removed from the built copy.
const infrafeedBookkeeping = {
  name: 'infrafeed-bookkeeping',
  hooks: {
    'astro:build:done': async ({ dir }) => {
      const built = fileURLToPath(dir);
      for (const name of [
        'feeds/.infrafeed-manifest',
        'feeds/.infrafeed-ids',
        'feeds/.infrafeed-journal',
        'feeds/.infrafeed-next',
        '.feeds.infrafeed-next',
      ]) {
        await rm(built + name, { force: true, recursive: true });
      }
    },
  },
};

export default defineConfig({
  site: 'https://caomaolufei.github.io',
  base: '/AIInfraGuide',
  integrations: [tailwind(), sitemap(), infrafeedBookkeeping],
  experimental: {
    contentLayer: true,
  },
  markdown: {
    remarkPlugins: [remarkMath],
    rehypePlugins: [
      rehypeSlug,
      [rehypeAutolinkHeadings, { behavior: 'wrap' }],
      [rehypeExternalLinks, { target: '_blank', rel: ['nofollow', 'noopener'] }],
      rehypeKatex,
    ],
  },
});
