/**
 * Forms (docs/forms.md), the pure layer: form types from models (`M.Form`) and form files
 * (`📤/⏳Name.yaml`), reading a submission into checked values and messages, and the view model
 * of a form instance for Mustache views. Requests, sessions and form-state storage are wired
 * elsewhere (src/app, src/script); this folder depends only on diag, shared and models.
 */
export { defaultForm, isFormFillable, controlOf, notFillableReason } from './fields.js';
export { parseFormFile, formNameOf } from './parse.js';
export { readSubmission, enteredTexts } from './submission.js';
export { formView, freshFormView, escapeAttribute } from './view.js';
export type {
  AttributeText,
  ChoiceView,
  FormBody,
  FormControl,
  FormField,
  FormFieldView,
  FormMessage,
  FormType,
  FormViewInit,
  FormViewValue,
  InputType,
  InputView,
  SelectView,
  Submission,
  TextareaView,
  ToggleView,
} from './types.js';
