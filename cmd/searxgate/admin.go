package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/searxgate/searxgate/directory"
	"github.com/searxgate/searxgate/egress"
	"github.com/searxgate/searxgate/operator"
	"github.com/searxgate/searxgate/web"
)

// adminOps is the operator as the instance API sees it: a URL that the
// parser or the address guard refuses (unparsable, not http(s), a port
// outside 1 to 65535, longer than directory.MaxURLLength, a non-public
// address), and an add past --max-own-instances, are the client's error
// (web.ErrBadInstance, answered 400); anything else is the server's.
type adminOps struct{ op *operator.Operator }

func (a adminOps) Add(ctx context.Context, raw string) (string, error) {
	u, err := a.op.Add(ctx, raw)
	return u, clientError(err)
}

func (a adminOps) Remove(raw string) (bool, error) {
	ok, err := a.op.Remove(raw)
	return ok, clientError(err)
}

func (a adminOps) SetDisabled(raw string, disabled bool) (bool, error) {
	ok, err := a.op.SetDisabled(raw, disabled)
	return ok, clientError(err)
}

func (a adminOps) Reset() error { return a.op.Reset() }

func clientError(err error) error {
	if err != nil && (errors.Is(err, directory.ErrBadURL) || errors.Is(err, directory.ErrScheme) ||
		errors.Is(err, egress.ErrBadURL) || errors.Is(err, egress.ErrScheme) ||
		errors.Is(err, egress.ErrPrivateAddress) || errors.Is(err, operator.ErrTooManyOwn)) {
		return fmt.Errorf("%w: %w", web.ErrBadInstance, err)
	}
	return err
}
