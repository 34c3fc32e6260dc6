// Vite's `?raw` imports: a file's text (the docs the tests compare the document with).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
