// Vite's import.meta.glob as the store-ownership guard uses it: every source file's text, by path.
interface ImportMeta {
  glob(pattern: string, options: { query: "?raw"; import: "default"; eager: true }): Record<string, string>;
}
