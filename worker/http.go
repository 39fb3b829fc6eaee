package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
	"go.uber.org/fx"

	"handoff/internal/kafka"
	"handoff/internal/pgstore"
	"handoff/internal/redact"
	"handoff/internal/workload"
)

// startHTTP serves the routes of newMux from start until stop.
func startHTTP(lc fx.Lifecycle, cfg Config, c client.Client, store *pgstore.Store, k *kafka.Client,
	reg *prometheus.Registry, t *workload.Tracker, log *slog.Logger,
) {
	isReady := func(ctx context.Context) error { return ready(ctx, c, store, k) }
	srv := &http.Server{Addr: cfg.HTTPAddr, Handler: newMux(reg, t, isReady, cfg.Pprof, log), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", cfg.HTTPAddr)
			if err != nil {
				return fmt.Errorf("http listen %s: %w", cfg.HTTPAddr, err)
			}
			go func() {
				defer close(done)
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("http server", "error", err)
				}
			}()
			log.Info("http serving", "addr", ln.Addr().String())
			return nil
		},
		OnStop: func(ctx context.Context) error {
			err := srv.Shutdown(ctx)
			<-done
			return err
		},
	})
}

// newMux routes /healthz (the process is alive), /readyz (isReady
// answers nil), /metrics (Prometheus, from g), /status (what the
// worker is doing, from t; / redirects there) and, with withPprof,
// /debug/pprof/ (Go's profiles).
func newMux(g prometheus.Gatherer, t *workload.Tracker, isReady func(context.Context) error, withPprof bool, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := isReady(ctx); err != nil {
			http.Error(w, redact.URL(err.Error()), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	// A metric that fails to collect is logged and left out, rather than
	// failing the whole scrape.
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog: promLogger{log}, ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.Handle("/status", statusHandler(t))
	mux.Handle("/{$}", http.RedirectHandler("/status", http.StatusFound))
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// promLogger logs promhttp's errors.
type promLogger struct{ log *slog.Logger }

func (l promLogger) Println(v ...any) { l.log.Warn("metrics: " + fmt.Sprint(v...)) }

func ready(ctx context.Context, c client.Client, store *pgstore.Store, k *kafka.Client) error {
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	if err := store.Ping(ctx); err != nil {
		return redact.Error(err)
	}
	if err := k.Ping(ctx); err != nil {
		return fmt.Errorf("kafka: %w", redact.Error(err))
	}
	return nil
}
