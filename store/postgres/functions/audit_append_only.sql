-- The operators' audit log is appended to, never changed: this trigger
-- refuses an update or a delete, so an entry read is an entry written.
CREATE FUNCTION audit_append_only() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'grit audit log is append-only: % refused', TG_OP;
END
$$;
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
