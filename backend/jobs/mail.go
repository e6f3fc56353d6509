package jobs

import (
	"context"
	"log/slog"

	"github.com/agentdesk/agentdesk/backend/service"
)

// Mail is how the Runner sends the questions' emails (--smtp-url): through Sender, with
// links under BaseURL (the server's public URL, else the address it listens on).
type Mail struct {
	Sender  service.MailSender
	BaseURL string
}

// mail queues an email for each new question (service.QueueQuestionMail) and sends the
// outbox, at most MaxA2ASends at once, looking every second: a failing or slow mail
// server holds only these goroutines, never a write.
func (r *Runner) mail(ctx context.Context) {
	defer r.wg.Done()
	m := r.opts.Mail
	due := func(ctx context.Context) ([]int64, error) {
		if err := r.svc.QueueQuestionMail(ctx); err != nil && ctx.Err() == nil && !quiet(err) {
			slog.Warn("mail: queue new questions", "err", err)
		}
		ids, err := r.svc.DueMail(ctx)
		if err != nil && ctx.Err() == nil && !quiet(err) {
			slog.Warn("mail: list due", "err", err)
		}
		return ids, nil // logged here, in the mail's words
	}
	drive(ctx, due, nil, func(ctx context.Context, id int64) {
		if err := r.svc.DeliverMail(ctx, id, m.Sender, m.BaseURL); err != nil && ctx.Err() == nil && !quiet(err) {
			slog.Warn("mail: send", "send", id, "err", err)
		}
	})
}
