/** Codes of the manifest /🎛.yaml and the properties /🎨.scss. */
export const SETTINGS_CODES = {
} as const;
