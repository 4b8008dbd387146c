import { defineCollection, z } from 'astro:content';
import { glob } from 'astro/loaders';

// The real site's posts collection and schema: the changelog page that
// infrafeed writes (docs/posts/update-log.md) must pass it, or the build fails.
const posts = defineCollection({
  loader: glob({ pattern: '**/*.md', base: './docs/posts' }),
  schema: z.object({
    title: z.string(),
    description: z.string(),
    pubDate: z.coerce.date(),
    updatedDate: z.coerce.date().optional(),
    heroImage: z.string().optional(),
    tags: z.array(z.string()).default([]),
    draft: z.boolean().default(false),
    ref: z.string().optional(),
  }),
});

export const collections = { posts };
