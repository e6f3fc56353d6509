//go:build desktop && linux

package app

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
	"github.com/wailsapp/wails/v2/pkg/options"
)

// activateRunning asks the window already open with this single-instance id to come to
// the front, by the message Wails' SingleInstanceLock listens for on the D-Bus session
// bus (the name, path and method of wails v2.16.0's
// internal/frontend/desktop/linux/single_instance.go). That window's
// OnSecondInstanceLaunch then shows it. We send it ourselves, before starting anything,
// because Wails checks only once the window exists, after the server would have started.
func activateRunning(uniqueID string) error {
	id := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(uniqueID)
	name, path := "org."+id+".SingleInstance", dbus.ObjectPath("/org/"+id+"/SingleInstance")
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return fmt.Errorf("no D-Bus session bus: %w", err)
	}
	defer conn.Close()
	data := options.SecondInstanceData{Args: os.Args[1:]}
	data.WorkingDirectory, _ = os.Getwd()
	msg, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return conn.Object(name, path).Call(name+".SendMessage", 0, string(msg)).Store()
}
