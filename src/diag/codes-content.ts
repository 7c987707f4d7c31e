/** Codes of static models under /🗄/, Markdown rendering and content sites (src/content). */
export const CONTENT_CODES = {
  LW_CONTENT_DEFINITION: 'A file directly in /🗄/ is not a static model definition, or a static model has two document fields of one kind.',
  LW_CONTENT_DOCUMENT: 'A document under /🗄/<Model>/ breaks its definition: an unknown or missing field, a wrong value, a path that is not a date, a uid claimed twice.',
  LW_CONTENT_CONNECTOR_LIST: '/🔌.yaml is not a list of connector sources (git URLs or paths), or names one connector twice.',
  LW_CONTENT_CONNECTOR_DEFINITION: "A connector's /🎛.yaml or one of its tag definitions (/<>/tag.yaml) is malformed.",
  LW_CONTENT_CONNECTOR_UNAVAILABLE: 'A connector tag names a connector whose source is not on this machine (no --source for its URL, or a missing directory); the tag is removed.',
  LW_CONTENT_CONNECTOR_UNKNOWN_TAG: 'A connector tag names a connector /🔌.yaml does not import, or a tag the connector does not define; the tag is removed.',
  LW_CONTENT_CONNECTOR_ATTRIBUTE: 'A connector tag carries an attribute that is not passed to its script (only async, defer, id and data-* are).',
  LW_CONTENT_SOURCES_FILE: 'The sources file (laneway.sources.yaml next to the app, or --sources FILE) does not parse, is not `sources: {<git URL>: <dir>}`, or names a directory that does not exist.',
  LW_CONTENT_CONNECTOR_TAG: 'A connector tag is not written literally in one piece (a template tag inside or around it).',
} as const;
