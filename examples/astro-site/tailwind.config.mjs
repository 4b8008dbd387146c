import typography from '@tailwindcss/typography';

/** @type {import('tailwindcss').Config} */
export default {
  content: ['./src/**/*.{astro,html,js,md,ts}'],
  darkMode: 'class',
  plugins: [typography],
};
