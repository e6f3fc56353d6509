//go:build desktop

package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"

	"github.com/agentdesk/agentdesk/backend/server"
)

// Run starts the server on cfg.Addr (127.0.0.1, for agents), opens the window on the
// same handler, and shuts everything down cleanly when the window closes.
func Run(cfg server.Config) int {
	ctx := context.Background()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk:", err)
		return 1
	}
	slog.Info("agentdesk is listening", "url", srv.URL(), "data", cfg.DataDir)
	err = wails.Run(&options.App{
		Title:       Title,
		Width:       Width,
		Height:      Height,
		MinWidth:    MinWidth,
		MinHeight:   MinHeight,
		AssetServer: &assetserver.Options{Handler: srv.Handler()},
		OnShutdown: func(context.Context) {
			slog.Info("window closed: shutting down")
		},
	})
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if stopErr := srv.Shutdown(shutdownCtx); stopErr != nil {
		slog.Error("shutdown", "err", stopErr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentdesk:", err)
		return 1
	}
	return 0
}
