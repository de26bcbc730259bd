{{/*
What the API and worker pods share: service account, security, volumes (the data dir and /tmp are emptyDirs, as
the root file system is read-only), scheduling. Called with (dict "root" $ "component" "api"|"worker" "role" <values>).
*/}}
{{- define "mailer.podSpecCommon" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "mailer.serviceAccountName" $root }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .role.terminationGracePeriodSeconds }}
{{- include "mailer.topologySpread" (dict "root" $root "component" .component "spread" .role.topologySpread) }}
{{- with .role.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .role.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .role.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  # MAILER_DATA_DIR (/data/mailer, made owner-only by the service): the self-signed submission certificate,
  # the catcher's mail. Nothing in it outlives the pod: every secret comes from a Secret.
  - name: data
    emptyDir: {}
  - name: tmp
    emptyDir: {}
  {{- if and (eq .component "api") $root.Values.smtp.tlsSecret }}
  - name: smtp-tls
    secret:
      secretName: {{ $root.Values.smtp.tlsSecret }}
  {{- end }}
{{- end -}}

{{- define "mailer.probes" -}}
# Up to 5 minutes for the first start (migrations, Temporal's connection), then the usual checks.
startupProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 5
  failureThreshold: 60
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
# /readyz answers 503 while PostgreSQL or Temporal does not: the pod leaves the Service's endpoints meanwhile.
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{- define "mailer.volumeMounts" -}}
volumeMounts:
  - name: data
    mountPath: /data
  - name: tmp
    mountPath: /tmp
  {{- if and (eq .component "api") .root.Values.smtp.tlsSecret }}
  - name: smtp-tls
    mountPath: /etc/mailer/tls
    readOnly: true
  {{- end }}
{{- end -}}
