-- new_lease_token is the next lease token, for statements that take a
-- few (rescues); the claim functions check the sequence once and take
-- many.
CREATE FUNCTION new_lease_token() RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM lease_tokens_past_start();
    RETURN nextval('lease_tokens');
END
$$;
