import type { Value } from '@bufbuild/protobuf/wkt';

/** A suppression's topic as a table shows it: the topic, or empty when it has none (null in --json). */
export const topicOf = (topic: Value | undefined): string =>
  topic?.kind.case === 'stringValue' ? topic.kind.value : '';
