/**
 * Inline images: an attachment with a content id is sent as an inline part (Content-ID: <content_id>, in
 * multipart/related) that the html shows as `cid:content_id`. NULL: an ordinary attachment.
 */
export const sql = /* sql */ `
ALTER TABLE attachments ADD COLUMN content_id text;
`;
