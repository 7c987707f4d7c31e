/** Codes of form definitions (`📤/⏳Name.yaml`) and form submissions (src/forms). */
export const FORM_CODES = {
  LW_FORM_FILE_NAME: 'A form definition file is not named ⏳<Name>.yaml with a PascalCase name.',
  LW_FORM_DEFINITION: 'A form definition is not shaped as one model with its fields, or as groups or steps of them.',
  LW_FORM_NAME: 'A group or step name is not PascalCase.',
  LW_FORM_MODEL: 'A form names a model (📦.Name) that does not exist or is an embedded type.',
  LW_FORM_FIELD: 'A form names a field its model does not have.',
  LW_FORM_FIELD_NOT_ALLOWED: 'A form names a field a visitor may not fill: built-in, protected, of a type forms do not fill, or named like a property of the form view.',
  LW_FORM_DUPLICATE: 'A form names one field twice, or two groups or steps share a name.',
  LW_FORM_OPTION: 'A per-field option of a form is unknown or has a value of the wrong kind (label, placeholder, about, readOnly).',
  LW_FORM_SETTINGS: 'The 🎛: block of a form is malformed (its one setting is requirePreviousState: true or false).',
  LW_FORM_STEP: 'Steps of a form are malformed: the first step has no model or starts with +, or a later step names another model.',
} as const;
