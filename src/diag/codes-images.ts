/** Codes of uploaded images: uploads, processing and serving (src/images/, src/app/services/images.ts). */
export const IMAGE_CODES = {
  LW_IMAGE_INVALID: 'An upload is not a PNG, JPEG or GIF image that can be read (recognised by its bytes): the PUT answers 415, or processing marks it failed.',
  LW_IMAGE_TOO_LARGE: 'An upload is over 10 MB (413) or has more pixels than the decompression-bomb cap (50 million).',
  LW_IMAGE_NOT_UPLOADED: 'A write stored an upload address in an image field, but nothing was PUT to it (or its upload was swept): the request answers 422 and nothing is written.',
  LW_IMAGE_STORE: 'The image worker could not read or update the image table, or an upload file is not on this instance (several instances must share the images directory).',
} as const;
