export {
  ONLINE_SOFTMAX_EMPTY,
  onlineSoftmaxFinalize,
  onlineSoftmaxUpdate,
  softmaxShift,
  type OnlineSoftmaxState,
  type OnlineSoftmaxStep,
} from './onlineSoftmax.ts';
export { BlockOnlineSoftmax } from './blockOnlineSoftmax.ts';
