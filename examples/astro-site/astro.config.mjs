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

// Astro copies public/ into dist/ as is, dot-files included; infrafeed's
// bookkeeping files (.infrafeed-manifest, .infrafeed-ids, .infrafeed.lock)
// sit in public/feeds/ so that the next `npm run feeds` finds them, but they
// are no page of the site: they are removed from the built copy.
const infrafeedBookkeeping = {
  name: 'infrafeed-bookkeeping',
  hooks: {
    'astro:build:done': async ({ dir }) => {
      const feeds = fileURLToPath(new URL('feeds/', dir));
      for (const name of ['.infrafeed-manifest', '.infrafeed-ids', '.infrafeed.lock']) {
        await rm(feeds + name, { force: true });
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
