package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// sandboxCommand is "recall-archive sandbox": the built-in sandbox
// provider, on its own.
func sandboxCommand() *command.Command {
	var addr, faults string
	var refuseFor time.Duration
	var plan sandbox.Plan
	return &command.Command{
		Name: "sandbox", JSON: true,
		Summary: "run the built-in sandbox provider",
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&addr, "addr", "127.0.0.1:8787", "listen on this `ADDR`")
			f.StringVar(&faults, "faults", "", `inject faults: "N:FAULT" for request N, "FAULT=P%" at random; faults: charge-drop, hang, 429, 500, 502, 503`)
			f.DurationVar(&refuseFor, "refuse-for", 0, "refuse connections for this long after starting (nothing listens on the port)")
		},
		Check: func(*command.Run) (err error) {
			if plan, err = sandbox.ParsePlan(faults); err != nil {
				return command.Usagef("%v", err)
			}
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error {
			sb := sandbox.New(sandbox.Options{Plan: plan})
			if refuseFor > 0 {
				fmt.Fprintf(r.Stdout, "refusing connections on %s for %s\n", addr, refuseFor)
				select {
				case <-time.After(refuseFor):
				case <-ctx.Done():
					return nil
				}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
			r.Show(map[string]string{"url": "http://" + ln.Addr().String()}, func(w io.Writer) {
				fmt.Fprintf(w, "sandbox provider listening on http://%s (POST /v1/audio/transcriptions; GET /v1/sandbox/charges)\n", ln.Addr())
			})
			go func() {
				<-ctx.Done()
				sb.Close()
				srv.Close()
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
}
