/** Codes of the manifest /🎛.yaml and the properties /🎨.scss. */
export const SETTINGS_CODES = {
  LW_SETTINGS_MANIFEST: 'The manifest /🎛.yaml is not a map of keys.',
  LW_SETTINGS_NAME: 'The manifest /🎛.yaml has no name: (a warning), or its name is not text.',
  LW_SETTINGS_LOCALE: 'The locale: of /🎛.yaml is not a language tag such as en, en-US or de-DE.',
  LW_SETTINGS_VALUE: 'A key of /🎛.yaml (app, domain, path, type) has a value of the wrong kind.',
  LW_SETTINGS_UNKNOWN_KEY: 'A top-level key of /🎛.yaml that Laneway does not know; it is ignored.',
  LW_SETTINGS_RESOURCE_PAGE: 'A view, page or script in a type: resource site, which has no pages of its own; it is not served.',
  LW_SETTINGS_PROPERTIES_SYNTAX: 'The properties file /🎨.scss holds something other than $name: value; declarations and comments.',
  LW_SETTINGS_PROPERTY_NAME: 'A property name is malformed or reserved.',
  LW_SETTINGS_PROPERTY_DUPLICATE: 'Two properties of /🎨.scss have the same name (as written or in camelCase).',
  LW_SETTINGS_PROPERTY_VALUE: 'A property value is not a string, boolean, number, color or url(); Sass reads it, views and scripts see its text.',
  LW_SETTINGS_PROPERTY_URL: 'A url() property does not name a public file of the app by its absolute path.',
  LW_SETTINGS_PROPERTY_CATEGORY: 'A @category doc comment names a category other than style, messages or options.',
  LW_SETTINGS_MESSAGE: 'A string property is not a well-formed ICU message.',
  LW_SETTINGS_MESSAGE_ARGUMENTS: 'A message property is called with the wrong number of arguments.',
  LW_SETTINGS_UNKNOWN_PROPERTY: 'A view reads a property that /🎨.scss does not define, or a member of a property.',
} as const;
