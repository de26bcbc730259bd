{{/* Names: <release>-mailer unless the release's name already says mailer; 63 characters at most (DNS labels). */}}
{{- define "mailer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mailer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's name: <fullname>-api, <fullname>-worker, <fullname>-smtp (room left for the suffix). */}}
{{- define "mailer.componentName" -}}
{{- printf "%s-%s" (include "mailer.fullname" .root | trunc 56 | trimSuffix "-") .component -}}
{{- end -}}

{{- define "mailer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mailer.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "mailer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mailer.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: mailer
{{- end -}}

{{- define "mailer.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "mailer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mailer.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding MAILER_ADMIN_TOKEN, MAILER_ENCRYPTION_KEY and MAILER_METRICS_TOKEN. */}}
{{- define "mailer.secretName" -}}
{{- default (printf "%s-secrets" (include "mailer.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The Secret holding DATABASE_URL: yours (database.existingSecret) or the chart's, made from database.url. */}}
{{- define "mailer.databaseSecretName" -}}
{{- default (printf "%s-database" (include "mailer.fullname" .)) .Values.database.existingSecret -}}
{{- end -}}

{{- define "mailer.databaseSecretKey" -}}
{{- if .Values.database.existingSecret -}}{{ .Values.database.existingSecretKey }}{{- else -}}DATABASE_URL{{- end -}}
{{- end -}}

{{- define "mailer.smtpSecretName" -}}
{{- default (printf "%s-smtp" (include "mailer.fullname" .)) .Values.delivery.existingSecret -}}
{{- end -}}

{{- define "mailer.smtpSecretKey" -}}
{{- if .Values.delivery.existingSecret -}}{{ .Values.delivery.existingSecretKey }}{{- else -}}SMTP_URL{{- end -}}
{{- end -}}

{{/* Whether SMTP_URL is given (relay mode needs it; the other modes may use it). */}}
{{- define "mailer.hasSmtpUrl" -}}
{{- if or .Values.delivery.smtpUrl .Values.delivery.existingSecret -}}true{{- end -}}
{{- end -}}

{{/*
The environment both roles share: the service reads nothing else (src/config.ts declares each variable; the
chart's test holds these names to it). Secrets come from Secrets, never from values written into the pod spec.
*/}}
{{- define "mailer.env" -}}
{{- $ := . -}}
{{- if and (eq .Values.delivery.mode "relay") (not (include "mailer.hasSmtpUrl" .)) -}}
{{- fail "delivery.mode relay needs delivery.smtpUrl or delivery.existingSecret (the smart host's SMTP_URL)" -}}
{{- end -}}
- name: HOST
  value: "0.0.0.0"
- name: MAILER_DATA_DIR
  value: /data/mailer
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.databaseSecretName" . }}
      key: {{ include "mailer.databaseSecretKey" . }}
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required (the Temporal frontend's host:port)" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: MAILER_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.secretName" . }}
      key: MAILER_ADMIN_TOKEN
- name: MAILER_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.secretName" . }}
      key: MAILER_ENCRYPTION_KEY
- name: MAILER_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.secretName" . }}
      key: MAILER_METRICS_TOKEN
      # A Secret of yours may leave it out: /metrics is then open to whoever reaches the pods.
      optional: {{ not (empty .Values.secrets.existingSecret) }}
- name: MAILER_DELIVERY
  value: {{ .Values.delivery.mode | quote }}
{{- if include "mailer.hasSmtpUrl" . }}
- name: SMTP_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "mailer.smtpSecretName" . }}
      key: {{ include "mailer.smtpSecretKey" . }}
{{- end }}
{{- with .Values.publicUrl }}
- name: MAILER_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.trackingUrl }}
- name: MAILER_TRACKING_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.hostname }}
- name: MAILER_HOSTNAME
  value: {{ . | quote }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/* Topology spread over each key, for one component's pods. */}}
{{- define "mailer.topologySpread" -}}
{{- $spread := .spread -}}
{{- if $spread.enabled }}
topologySpreadConstraints:
{{- range $spread.topologyKeys }}
  - maxSkew: {{ $spread.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: {{ $spread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "mailer.selectorLabels" $ | nindent 8 }}
{{- end }}
{{- end }}
{{- end -}}
