// Package cli is agentdesk's command line: the flags, the subcommands of the contract
// (project, agent, token, backup, version) and the choice between --serve and the
// desktop window. Subcommands act as the local owner through the service layer.
package cli
