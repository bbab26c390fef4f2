// SPDX-License-Identifier: Apache-2.0

// Command binding-controller-manager runs the binding controllers: every ResourceBinding
// and ClusterResourceBinding becomes one Work per target cluster.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/pkg/controllermanager"
)

func main() {
	opts := controllermanager.NewOptions()
	fs := flag.NewFlagSet("binding-controller-manager", flag.ContinueOnError)
	opts.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: binding-controller-manager [flags]\n\n"+
			"Turns Karmada ResourceBindings and ClusterResourceBindings into one Work per target cluster.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	// Parse quietly: a bad flag gets one line below, not the whole usage.
	fs.SetOutput(io.Discard)
	err := fs.Parse(os.Args[1:])
	fs.SetOutput(os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return
	case err != nil:
		fail(fmt.Errorf("%w (see --help)", err))
	case fs.NArg() > 0:
		fail(fmt.Errorf("unexpected arguments %q (see --help)", fs.Args()))
	}
	if err := opts.Validate(); err != nil {
		fail(err)
	}
	logger := zap.New(zap.UseFlagOptions(&opts.Zap))
	ctrl.SetLogger(logger)
	// client-go logs through klog; one format for everything the process prints.
	klog.SetLogger(logger)
	if err := controllermanager.Run(ctrl.SetupSignalHandler(), opts); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "binding-controller-manager: %v\n", err)
	os.Exit(1)
}
