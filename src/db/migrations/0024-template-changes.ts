/**
 * Every change to a template row (an edit, a publish, a delete: all UPDATEs; a create needs none) notifies the
 * `mail_templates` channel with the account's id, at commit. API processes remember which version each
 * template a send names renders (services/pinned-versions.ts) and forget an account's on this notification, so
 * a publish or a delete made through any process reaches every other within milliseconds. A trigger rather than
 * the application's own NOTIFY: a process that dies between its commit and its NOTIFY cannot leave others stale.
 */
export const sql = /* sql */ `
CREATE FUNCTION notify_template_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('mail_templates', NEW.account_id);
  RETURN NULL;
END $$;
CREATE TRIGGER templates_changed AFTER UPDATE ON templates FOR EACH ROW EXECUTE FUNCTION notify_template_change();
COMMENT ON FUNCTION notify_template_change() IS
  'Notifies mail_templates with the account id when a template changes, so API processes forget the versions they keep.';
`;
