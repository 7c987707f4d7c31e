/** Codes of the development server (`laneway dev`, `serve --watch`; src/dev). */
export const DEV_CODES = {
  LW_DEV_WATCH: 'The file watcher of `laneway dev` or `serve --watch` failed (a system limit on watched files, an unreadable directory): changes may be missed.',
  LW_DEV_HOST: 'The development server (`laneway dev`, `serve --dev`) refused a request whose Host is not this machine nor a name given with --host or --allowed-host.',
} as const;
