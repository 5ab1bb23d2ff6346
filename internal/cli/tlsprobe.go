package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/grit-run/grit/api/client"
)

// tlsProbeTimeout bounds the dial and the handshake unanswered tries.
const tlsProbeTimeout = 3 * time.Second

// unanswered says why a call to the server cfg dials found no server:
// nothing listens there, or it speaks TLS where the client does not, or
// the other way round (a usage error: the client's settings are to
// fix); nil when it cannot tell. It dials the server and tries a TLS
// handshake of its own, sending nothing over it.
func unanswered(cfg client.Config) error {
	speaks, dialErr := speaksTLS(cfg.Addr)
	switch {
	case dialErr != nil:
		return &exitError{code: exitUnavailable, err: fmt.Errorf("nothing answers at %s (%v): is a grit server running there? (grit server starts one; --server or GRIT_SERVER names another)", cfg.Addr, dialErr)}
	case cfg.TLS && !speaks:
		return usageErr("the server at %s does not speak TLS, and this client dials with TLS (GRIT_SERVER_TLS or GRIT_SERVER_CA is set): unset them, or start grit server with --tls-cert and --tls-key", cfg.Addr)
	case !cfg.TLS && speaks:
		return usageErr("the server at %s speaks TLS, and this client dials without it: set GRIT_SERVER_TLS=true (and GRIT_SERVER_CA=FILE when its certificate is not signed by an authority this machine trusts)", cfg.Addr)
	}
	return nil
}

// speaksTLS tries a TLS handshake with addr: speaks is whether it
// answered in TLS; dialErr why nothing answered.
func speaksTLS(addr string) (speaks bool, dialErr error) {
	conn, err := (&net.Dialer{Timeout: tlsProbeTimeout}).Dial("tcp", addr)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(tlsProbeTimeout))
	c := tls.Client(conn, &tls.Config{
		// Only whether the server answers in TLS matters here, not who it
		// is: nothing is sent over the connection.
		InsecureSkipVerify: true, //nolint:gosec
		MinVersion:         tls.VersionTLS12,
	})
	err = c.Handshake()
	var alert tls.AlertError
	return err == nil || errors.As(err, &alert), nil // an alert is TLS too: the server refused this handshake
}
